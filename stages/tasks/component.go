package tasks

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

// Register registers the "tasks" stage.
func Register(r *component.Registry) {
	component.RegisterStage(r, "tasks", "one task record per task of a StarPU trace (codelet, worker, duration, parameters; energy with a power stream)", DefaultStageConfig, newStage)
}

// StageConfig is the configuration of a "tasks" stage. Inputs: paje
// parsers' entities, with user_defined: true (the task fields are extra
// fields), from any number of traces (each stream is a run); with energy:
// true, one trace's entities and a power parser's samples.
type StageConfig struct {
	// TimeUnit of the traces: s, ms (default: StarPU's), us, ns.
	TimeUnit string `yaml:"time_unit"`
	// StateType is the worker state type; IDField the extra field with the
	// task id (a state without it is no task).
	StateType string `yaml:"state_type"`
	IDField   string `yaml:"id_field"`
	// Run names the run in the records instead of the stream's name.
	Run string `yaml:"run"`
	// Energy attributes power to tasks: the tasks are held to the end of
	// input (the energy needs the whole timeline) and emitted then, sorted
	// by start. The options below are the energy stage's.
	Energy   bool              `yaml:"energy"`
	Node     string            `yaml:"node"`      // node of unmapped workers
	Map      map[string]string `yaml:"map"`       // worker container -> node
	NodeType string            `yaml:"node_type"` // unmapped workers go to their ancestor of this type
	// Lengths of time: a duration with a unit (500ms) or seconds.
	MaxGap   tracecast.Seconds `yaml:"max_gap"`  // longest integrated interval between samples
	Lateness tracecast.Seconds `yaml:"lateness"` // how late a sample may arrive
	Offset   tracecast.Seconds `yaml:"offset"`   // power time minus trace time
}

// DefaultStageConfig are the defaults: StarPU's worker states and task id,
// milliseconds, the energy stage's node and gap.
func DefaultStageConfig() StageConfig {
	return StageConfig{TimeUnit: "ms", StateType: "Worker State", IDField: FieldJobID, Node: energy.DefaultNode, MaxGap: 5}
}

// Validate checks the options.
func (o *StageConfig) Validate() error {
	var errs []error
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	if o.StateType == "" || o.IDField == "" {
		errs = append(errs, errors.New("state_type, id_field: must not be empty"))
	}
	if o.Lateness < 0 {
		errs = append(errs, errors.New("lateness: must not be negative"))
	}
	if !(o.MaxGap > 0) {
		errs = append(errs, fmt.Errorf("max_gap: must be positive (got %g)", o.MaxGap))
	}
	errs = append(errs, energy.CheckOffset("offset", o.Offset))
	return errors.Join(errs...)
}

type stage struct {
	o       StageConfig
	env     component.Env
	x       Extractor
	col     *energy.Collector
	held    []tracecast.Task
	streams map[string]bool
	samples []tracecast.PowerSample
	n       int
}

func newStage(env component.Env, o StageConfig) (tracecast.Processor, error) {
	st := &stage{o: o, env: env, streams: map[string]bool{},
		x: Extractor{StateType: o.StateType, IDField: o.IDField, PerSecond: tracecast.PerSecond(o.TimeUnit)}}
	if o.Energy {
		r := signal.StarPU()
		r.StateType = o.StateType
		if err := r.Compile(); err != nil {
			return nil, err
		}
		st.col = energy.NewCollector(r, o.Map, o.Node)
		st.col.SetNodeType(o.NodeType)
	}
	return st, nil
}

func (st *stage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	switch items := in.Items.(type) {
	case []tracecast.Entity:
		run := in.Stream
		if st.o.Run != "" {
			run = st.o.Run
		}
		st.streams[in.Stream] = true
		var out []tracecast.Task
		for i := range items {
			if t, ok := st.x.Task(run, &items[i]); ok {
				out = append(out, t)
			}
		}
		st.n += len(out)
		if st.o.Energy {
			st.col.Add(items)
			st.held = append(st.held, out...)
			return nil
		}
		if len(out) == 0 {
			return nil
		}
		return emit(ctx, tracecast.Batch{Stream: in.Stream, Items: out})
	case []tracecast.PowerSample:
		if !st.o.Energy {
			return errors.New("tasks: power samples on an input, but energy is false")
		}
		st.samples = append(st.samples, items...)
	}
	return nil
}

// Flush attributes the energy (with energy: true) and emits the held
// tasks; without energy it only logs the count.
func (st *stage) Flush(ctx context.Context, emit tracecast.Emit) error {
	if !st.o.Energy {
		st.env.Logger.Info().Int("tasks", st.n).Int("runs", len(st.streams)).Msg("tasks")
		return nil
	}
	if len(st.streams) > 1 {
		return fmt.Errorf("tasks: energy with %d traces on one stage: use one stage per trace and its power stream", len(st.streams))
	}
	if len(st.samples) == 0 {
		return errors.New("tasks: energy is true but no power sample came")
	}
	tls, err := st.col.Build(tracecast.PerSecond(st.o.TimeUnit))
	if err != nil {
		return err
	}
	es, res := AttributeEnergy(st.held, tls, st.col.Node, st.samples,
		energy.Options{MaxGap: float64(st.o.MaxGap), Lateness: float64(st.o.Lateness), Offset: float64(st.o.Offset)})
	for _, w := range res.Warnings {
		st.env.Logger.Warn().Msg(w)
	}
	// Every task without energy because of a wrong node name or clock
	// offset is an error, not tasks that happened to fall in power gaps.
	if err := res.Check(); err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	if es.Uncovered > 0 {
		st.env.Logger.Warn().Int("tasks", es.Uncovered).Float64("gap_s", res.Stats.GapS).
			Msg("tasks not fully covered by the power stream: no energy (null)")
	}
	st.env.Logger.Info().Int("tasks", st.n).Int("with_energy", es.WithEnergy).Float64("energy_j", es.TotalJ).Msg("tasks")
	sort.SliceStable(st.held, func(a, b int) bool { return st.held[a].StartS < st.held[b].StartS })
	stream := ""
	for s := range st.streams {
		stream = s
	}
	for len(st.held) > 0 {
		n := min(len(st.held), 4096)
		if err := emit(ctx, tracecast.Batch{Stream: stream, Items: st.held[:n:n]}); err != nil {
			return err
		}
		st.held = st.held[n:]
	}
	return nil
}
