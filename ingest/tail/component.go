package tail

import (
	"fmt"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "tail" source.
func Register(r *component.Registry) {
	component.RegisterSource(r, "tail", "follows a file while it is written, resuming from a saved position", DefaultSourceConfig, newSource)
}

// SourceConfig are the options of a "tail" source: a file followed
// while it is written (see package ingest/tail). It never ends by itself: a
// pipeline with a tail source runs until it is stopped.
type SourceConfig struct {
	// Path is the file followed.
	Path string `yaml:"path"`
	// Start: beginning, end, saved-or-beginning (default) or saved-or-end.
	Start string `yaml:"start"`
	// PositionFile is where the position is saved; none when empty.
	PositionFile string `yaml:"position_file"`
	// HeaderPrefix marks the header lines re-read when resuming mid-file
	// (default "%"; "-" disables).
	HeaderPrefix string `yaml:"header_prefix"`
	// Poll is how often the file is checked for growth when no file
	// notification came (notifications wake the source at once).
	Poll time.Duration `yaml:"poll"`
	// Notify follows the file with file notifications (fsnotify; default
	// true), the poll as their fallback; false polls only.
	Notify bool `yaml:"notify"`
	// SyncEvery is how often the position is saved.
	SyncEvery time.Duration `yaml:"sync_every"`
	// BatchLines is the number of lines per batch.
	BatchLines int `yaml:"batch_lines"`
	// MaxLineBytes is the longest accepted line.
	MaxLineBytes int `yaml:"max_line_bytes"`
	// EndAfter ends the input when the file has not grown for that long
	// (the run is over: the last windows are flushed); 0 follows forever.
	EndAfter time.Duration `yaml:"end_after"`
}

// DefaultSourceConfig returns the defaults of a "tail" source.
func DefaultSourceConfig() SourceConfig {
	return SourceConfig{BatchLines: defaultBatchLines, MaxLineBytes: defaultMaxLineBytes, Notify: true}
}

// Validate checks the options.
func (o *SourceConfig) Validate() error {
	for _, l := range []struct {
		key string
		v   int
	}{{"batch_lines", o.BatchLines}, {"max_line_bytes", o.MaxLineBytes}} {
		if l.v <= 0 {
			return fmt.Errorf("%s: must be positive (got %d)", l.key, l.v)
		}
	}
	_, err := New(o.tail())
	return err
}

// Paths: the file followed; the position file (and its temporary file)
// written.
func (o *SourceConfig) Paths() (inputs, outputs []string) {
	if o.PositionFile == "" {
		return []string{o.Path}, nil
	}
	return []string{o.Path}, []string{o.PositionFile, o.PositionFile + ".tmp"}
}

// StreamName is the file path, used by the parser in its messages.
func (o *SourceConfig) StreamName() string { return o.Path }

func (o *SourceConfig) tail() Options {
	return Options{Path: o.Path, Start: Start(o.Start), PositionFile: o.PositionFile, HeaderPrefix: o.HeaderPrefix,
		Poll: o.Poll, NoNotify: !o.Notify, SyncEvery: o.SyncEvery, BatchLines: o.BatchLines, MaxLineBytes: o.MaxLineBytes, EndAfter: o.EndAfter}
}

func newSource(env component.Env, o SourceConfig) (tracecast.Source, error) {
	to := o.tail()
	to.Logger = env.Logger
	to.Rebuild = env.Parser != nil && env.Parser.Stateful
	return New(to)
}

// Follows: the file is followed as it grows (component.Follower).
func (s *Source) Follows() bool { return true }
