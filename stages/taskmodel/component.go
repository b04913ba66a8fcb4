package taskmodel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "taskmodel" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "taskmodel", "adds a task model's predicted duration or energy to task records, and publishes the models", DefaultStageConfig, newStage)
}

// StageConfig is the configuration of a "taskmodel" stage. Input: task
// records (a tasks stage, or another taskmodel stage: chain one per
// target). Output: the same records with predicted_duration_s or
// predicted_energy_j set, and with publish, the models first (records:
// taskmodels), once.
type StageConfig struct {
	// Model is a file written by tracecast fit-model -o, of duration_s or
	// energy_j.
	Model string `yaml:"model"`
	// Publish emits the models as tracecast.taskmodel/1 records.
	Publish bool `yaml:"publish"`
}

// DefaultStageConfig publishes the models.
func DefaultStageConfig() StageConfig { return StageConfig{Publish: true} }

// Validate checks the options.
func (o *StageConfig) Validate() error {
	if o.Model == "" {
		return errors.New("model: a model file is required (tracecast fit-model -o)")
	}
	return nil
}

// Paths: the model file is read.
func (o *StageConfig) Paths() (inputs, outputs []string) { return []string{o.Model}, nil }

type stage struct {
	o         StageConfig
	env       component.Env
	p         *Predictor
	published bool
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	f, err := modelio.ReadTaskModel(o.Model)
	if err != nil {
		return nil, err
	}
	p, err := NewPredictor(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Model, err)
	}
	return &stage{o: o, env: env, p: p}, nil
}

func (st *stage) publish(ctx context.Context, stream string, emit tracecast.Emit) error {
	if st.published || !st.o.Publish {
		return nil
	}
	st.published = true
	recs, err := st.p.Records(time.Now())
	if err != nil || len(recs) == 0 {
		return err
	}
	return emit(ctx, tracecast.Batch{Stream: stream, Items: recs})
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if err := st.publish(ctx, in.Stream, emit); err != nil {
		return err
	}
	ts, ok := in.Items.([]tracecast.Task)
	if !ok {
		return nil
	}
	out := append([]tracecast.Task(nil), ts...)
	st.p.Predict(out)
	return emit(ctx, tracecast.Batch{Stream: in.Stream, Items: out, Watermark: in.Watermark})
}

// Flush publishes the models if no task came, and logs the counts.
func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if err := st.publish(ctx, "", emit); err != nil {
		return err
	}
	s := st.p.Stats
	st.env.Logger.Info().Str("target", st.p.f.Target).Int("predicted", s.Predicted).Int("no_model", s.NoModel).
		Int("failed", s.Failed).Msg("task predictions")
	return nil
}
