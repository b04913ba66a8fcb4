package iotime

import (
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "iotime" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "iotime", "I/O calls into \"in I/O\" states per process, the storage activity", nil, newStage)
}

// StageConfig is the configuration of an "iotime" stage: I/O calls in, "in
// I/O" state records out (container "pid N", type "IO State").
type StageConfig struct {
	// Buckets are the size buckets, e.g. "4K,64K,1M" (the default).
	Buckets string `yaml:"buckets"`
	// Summary emits, at the end, the breakdown by category as one
	// []iotime.Summary batch (see Processor.EmitSummary).
	Summary bool `yaml:"summary"`
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	if o.Buckets == "" {
		return nil
	}
	_, err := ParseBuckets(o.Buckets)
	return err
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	b := DefaultBuckets
	if o.Buckets != "" {
		var err error
		if b, err = ParseBuckets(o.Buckets); err != nil {
			return nil, err
		}
	}
	p := NewProcessor(b)
	p.EmitSummary = o.Summary
	return p, nil
}
