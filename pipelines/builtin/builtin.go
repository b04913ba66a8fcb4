// Package builtin registers tracecast's own components: one line per
// component type, each defined (options, defaults, validation, constructor)
// in its own package.
package builtin

import "github.com/tracecast/tracecast/pipelines"

// Registry returns a new registry holding every built-in component.
func Registry() *pipelines.Registry {
	return pipelines.Builtins()
}
