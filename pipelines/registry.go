package pipelines

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/pipelines/component"
)

// plan is a config whose components have known types and decoded options.
type plan struct {
	cfg     *Config
	entries map[*Component]*component.Entry
	opts    map[*Component]any
}

// Check resolves every component's type and decodes its options strictly,
// without building anything. Errors are a *ConfigError.
func Check(r *component.Registry, cfg *Config) error {
	_, err := makePlan(r, cfg)
	return err
}

func makePlan(r *component.Registry, cfg *Config) (*plan, error) {
	ps := &problems{file: cfg.File}
	p := &plan{cfg: cfg, entries: map[*Component]*component.Entry{}, opts: map[*Component]any{}}
	check := func(c *Component) {
		e, ok := r.Lookup(c.Kind, c.Type)
		if !ok {
			known := r.Types(c.Kind)
			list := strings.Join(known, ", ")
			if len(known) == 0 {
				list = "none registered"
			}
			ps.add(c.Line, c.path+".type", "unknown %s type %q (known: %s)", c.Kind, c.Type, list)
			return
		}
		opts := e.NewOptions()
		before := len(ps.list)
		decodeStrict(ps, c.options, opts, c.path)
		if len(ps.list) == before {
			if err := validate(opts); err != nil {
				// One problem per joined error, so each gets its own line.
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					for _, e := range j.Unwrap() {
						ps.add(c.Line, c.path, "%v", e)
					}
				} else {
					ps.add(c.Line, c.path, "%v", err)
				}
			}
		}
		p.entries[c], p.opts[c] = e, opts
	}
	for _, c := range cfg.Components() {
		check(c)
		if c.Parser != nil {
			check(c.Parser)
		}
	}
	if len(ps.list) == 0 {
		checkPaths(ps, cfg, p.opts)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkPaths refuses outputs that are inputs or other outputs (same file,
// after resolving links), reported at the output's component.
func checkPaths(ps *problems, cfg *Config, opts map[*Component]any) {
	var uses []paths.Use
	var at []*Component
	for _, c := range cfg.Components() {
		pu, ok := opts[c].(component.PathUser)
		if !ok {
			continue
		}
		ins, outs := pu.Paths()
		who := string(c.Kind) + " " + strconv.Quote(c.ID)
		for _, in := range ins {
			uses, at = append(uses, paths.Use{Who: who, Path: in}), append(at, c)
		}
		for _, out := range outs {
			uses, at = append(uses, paths.Use{Who: who, Path: out, Output: true}), append(at, c)
		}
	}
	for _, err := range paths.Conflicts(uses) {
		// The component of the output the error is about: the first
		// named in the message that writes.
		line, path := 0, ""
		for i, u := range uses {
			if u.Output && strings.HasPrefix(err.Error(), u.Who+" ") {
				line, path = at[i].Line, at[i].path
				break
			}
		}
		ps.add(line, path, "%v", err)
	}
}

func validate(opts any) error {
	if v, ok := opts.(component.Validator); ok { // *O
		return v.Validate()
	}
	return nil
}

// Validate loads a pipeline file and checks it completely (structure, types,
// options) against reg's components without starting anything. Errors are
// a *ConfigError.
func Validate(path string, reg *component.Registry) (*Config, error) {
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	if reg, err = orTestRegistry(reg); err != nil {
		return nil, err
	}
	if err := Check(reg, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// defaultTestRegistry is what Run and Validate use when given no registry: nil,
// except in this package's tests, which run real pipelines with the
// built-in components (registry_test.go sets it). The runtime itself
// cannot import them: it sits below them (TestImportRules).
var defaultTestRegistry func() *component.Registry

func orTestRegistry(reg *component.Registry) (*component.Registry, error) {
	switch {
	case reg != nil:
		return reg, nil
	case defaultTestRegistry != nil:
		return defaultTestRegistry(), nil
	}
	return nil, errors.New("pipelines: no component registry (RunOptions.Registry; app/builtin.Registry() has tracecast's own)")
}
