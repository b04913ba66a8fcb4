package pipelines

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// shipped holds the declared pipelines, the StarPU trace the demo runs on
// and a power stream of that run, so that a bare binary can run them.
//
//go:embed *.yaml testdata/starpu-cholesky-2cpu.trace.gz testdata/cholesky-2cpu.rapl.csv.gz
var shipped embed.FS

// DemoTracePath is where the shipped pipelines expect the demo trace, relative
// to the repository root.
const DemoTracePath = "pipelines/testdata/starpu-cholesky-2cpu.trace.gz"

// Shipped returns the names of the pipelines built into the binary
// ("replay-starpu", ...).
func Shipped() []string {
	names, _ := fs.Glob(shipped, "*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".yaml")
	}
	sort.Strings(names)
	return names
}

// ShippedFile returns a built-in pipeline file by name.
func ShippedFile(name string) ([]byte, error) {
	return shipped.ReadFile(name + ".yaml")
}

// DemoTrace returns the gzip-compressed StarPU 1.4.9 trace (Cholesky on 2
// CPU workers) built into the binary.
func DemoTrace() []byte {
	b, err := shipped.ReadFile("testdata/starpu-cholesky-2cpu.trace.gz")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return b
}

// DemoPowerName is the file name of DemoPower's stream.
const DemoPowerName = "cholesky-2cpu.rapl.csv.gz"

// DemoPower returns a gzip-compressed RAPL power stream (node0, 100 Hz
// counter readings) of the demo trace's run, in trace time (offset 0): the
// fixture testdata/power/cholesky-2cpu.rapl.csv.gz, made from the trace's
// real state timeline with seed 000's Taurus powers (docs/energy.md), so
// that the demo's report has its energy section.
func DemoPower() []byte {
	b, err := shipped.ReadFile("testdata/" + DemoPowerName)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return b
}

// ErrNoPipeline: LoadNamed found neither a file nor a built-in pipeline.
var ErrNoPipeline = errors.New("no such file, and no built-in pipeline of that name")

// LoadNamed reads a pipeline file, or, when no file has that name and the
// name has no '/' or '.', the pipeline built into the binary under it
// (parsed as "NAME.yaml (built in)"). Neither is ErrNoPipeline.
func LoadNamed(arg string) (*Config, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsAny(arg, "/.") {
		return Load(arg)
	}
	data, err := ShippedFile(arg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (built in: %s)", arg, ErrNoPipeline, strings.Join(Shipped(), ", "))
	}
	return Parse(data, arg+".yaml (built in)")
}
