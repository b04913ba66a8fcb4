// Command recordgen writes what the root package's record types derive
// from their declaration (internal/recordgen): records_gen.go and
// docs/schemas/*.json. `go generate` in the repository's root runs it.
package main

import (
	"fmt"
	"os"

	"github.com/tracecast/tracecast/internal/recordgen"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	changed, err := recordgen.Write(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordgen:", err)
		os.Exit(1)
	}
	for _, p := range changed {
		fmt.Println("recordgen: wrote", p)
	}
}
