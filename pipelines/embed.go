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

// shipped holds the declared pipelines and the StarPU trace the demo runs on,
// so that a bare binary can run them.
//
//go:embed *.yaml testdata/starpu-cholesky-2cpu.trace.gz
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
