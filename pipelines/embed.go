package pipelines

import (
	"embed"
	"io/fs"
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
