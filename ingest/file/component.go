package file

import (
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "file" source.
func Register(r *component.Registry) {
	component.RegisterSource(r, "file", "replays a file (plain or gzip) or standard input, at full speed or paced by trace time", DefaultSourceConfig, newSource)
}

// SourceConfig is the configuration of a "file" source: a file replayed
// from its start, optionally paced by trace time.
type SourceConfig struct {
	// Path is the file to replay (plain or gzip), or "-" for standard input.
	Path string `yaml:"path"`
	// Speed is max (default), realtime or Nx: pacing by trace time.
	Speed string `yaml:"speed"`
	// MaxLineBytes is the longest accepted line (default 1 MiB).
	MaxLineBytes int `yaml:"max_line_bytes"`
	// BatchLines is the number of lines per batch (default 1024).
	BatchLines int `yaml:"batch_lines"`
	// StrictEOL makes a missing newline at the end of the file an error.
	StrictEOL bool `yaml:"strict_eol"`
	// TimeUnit is the unit of the trace's timestamps for pacing (s, ms, us,
	// ns), for parsers that do not know it; the paje parser does (its
	// time_unit, or detected from the header).
	TimeUnit string `yaml:"time_unit"`
}

// DefaultSourceConfig returns the defaults of a "file" source.
func DefaultSourceConfig() SourceConfig {
	return SourceConfig{Speed: "max", MaxLineBytes: DefaultMaxLineBytes, BatchLines: DefaultBatchLines}
}

// Validate checks the options.
func (o *SourceConfig) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("path: required (a file, or - for standard input)"))
	}
	if _, err := ParseSpeed(o.Speed); err != nil {
		errs = append(errs, fmt.Errorf("speed: %w", err))
	}
	if o.MaxLineBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_line_bytes: must be positive (got %d)", o.MaxLineBytes))
	}
	if o.BatchLines <= 0 {
		errs = append(errs, fmt.Errorf("batch_lines: must be positive (got %d)", o.BatchLines))
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	return errors.Join(errs...)
}

// Paths: the file read.
func (o *SourceConfig) Paths() (inputs, outputs []string) { return []string{o.Path}, nil }

// StreamName is the file path, used by the parser in its messages.
func (o *SourceConfig) StreamName() string {
	if o.Path == "-" {
		return "stdin"
	}
	return o.Path
}

// progressSource adapts Source's progress to ProgressReporter.
type progressSource struct{ *Source }

func (s progressSource) SourceProgress() component.SourceProgress {
	p := s.Progress()
	return component.SourceProgress{Read: p.Read, Total: p.Total}
}

func newSource(env component.Env, o SourceConfig) (tracecast.Source, error) {
	speed, err := ParseSpeed(o.Speed)
	if err != nil {
		return nil, err
	}
	fo := Options{
		Path:         o.Path,
		Speed:        speed,
		MaxLineBytes: o.MaxLineBytes,
		BatchLines:   o.BatchLines,
		StrictEOL:    o.StrictEOL,
		Logger:       env.Logger,
	}
	// At full speed a parser that splits lines itself gets chunks.
	fo.Chunks = speed == SpeedMax && env.Parser != nil && env.Parser.Chunks
	if env.Parser != nil {
		// Hold no more of a line than the parser needs to refuse it, and
		// drop what it ignores.
		if m := env.Parser.MaxLineBytes; m > 0 && m < fo.MaxLineBytes {
			fo.CutLinesAt = m + 1
		}
		fo.SkipBlankLines = env.Parser.SkipBlankLines
	}
	if speed != SpeedMax {
		if env.Parser == nil || env.Parser.NewTimeOf == nil {
			return nil, fmt.Errorf("speed %s needs a parser that reads timestamps (none configured)", speed)
		}
		fo.TimeOf = env.Parser.NewTimeOf()
		switch {
		case env.Parser.TimeScale > 0: // the parser knows its unit (paje: seconds, detected)
			fo.TimeScale = env.Parser.TimeScale
		case o.TimeUnit != "":
			fo.TimeScale, _ = tracecast.UnitsPerSecond(o.TimeUnit)
		default:
			fo.TimeScale = 1
			env.Logger.Warn().Msg("pacing a replay without a known time unit: assuming seconds (set time_unit: ms for StarPU traces)")
		}
	}
	src, err := New(fo)
	if err != nil {
		return nil, err
	}
	return progressSource{src}, nil
}

// Follows: a replay paced by trace time (speed realtime, Nx) stands for a
// run happening now: its pipeline's streamed file outputs are written in
// place, read while written (component.Follower). A replay at full speed
// is a batch job: its outputs appear complete, or not at all.
func (s *Source) Follows() bool { return s.opts.Speed != SpeedMax }
