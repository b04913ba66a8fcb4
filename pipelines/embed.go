package pipelines

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// real state timeline with Yang et al.'s (2014) Taurus powers (docs/energy.md), so
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

// UseDemoTrace points the file sources of cfg that read the demo trace
// (DemoTracePath) at the copy built into the binary when there is no such
// file here: the shipped pipelines then run from any directory. A warning
// says so.
func UseDemoTrace(cfg *Config) error {
	for _, c := range cfg.Sources {
		if p, _ := c.Option("path"); c.Type != "file" || p != DemoTracePath {
			continue
		}
		if _, err := os.Stat(DemoTracePath); err == nil {
			continue
		}
		path, err := DemoTraceFile()
		if err != nil {
			return err
		}
		c.SetOption("path", path)
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("source %q: no %s here: reading the copy built into the binary (%s)", c.ID, DemoTracePath, path))
	}
	return nil
}

// DemoTraceFile writes the demo trace to the system's temporary directory,
// once (the directory is named by the trace's hash), and returns its path.
func DemoTraceFile() (string, error) {
	b := DemoTrace()
	sum := sha256.Sum256(b)
	dir := filepath.Join(os.TempDir(), "tracecast-"+hex.EncodeToString(sum[:6]))
	path := filepath.Join(dir, "starpu-cholesky-2cpu.trace.gz")
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, b) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".trace-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path) // atomic: a concurrent run sees all or nothing
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return path, nil
}
