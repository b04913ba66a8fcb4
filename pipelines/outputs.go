package pipelines

import "path/filepath"

// MoveOutputs puts every sink's file in dir under its own file name (an
// Arrow file's path.arrow as dir/path.arrow, ...) and returns the new paths
// by sink id. Run Check again before running cfg.
func (c *Config) MoveOutputs(dir string) map[string]string {
	outputs := map[string]string{}
	for _, s := range c.Sinks {
		p, _ := s.Option("path")
		outputs[s.ID] = filepath.Join(dir, filepath.Base(p))
		s.SetOption("path", outputs[s.ID])
	}
	return outputs
}
