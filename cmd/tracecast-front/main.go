// Command tracecast-front is the tracecast command's front binary,
// installed as tracecast by make build: it runs states and --version with
// only their packages linked, and every other command in the full binary
// beside it, tracecast-full (internal/front).
package main

import (
	"os"

	"github.com/tracecast/tracecast/internal/front"
)

func main() { front.Main(os.Args[1:]) }
