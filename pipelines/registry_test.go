package pipelines

import "github.com/tracecast/tracecast/app/builtin"

// The tests of the runtime run real pipelines: a test-only import of the
// components, which the runtime's own code cannot have (TestImportRules).
func init() { defaultTestRegistry = builtin.Registry }
