package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/stages/signal"
)

// signalFlags are the flags shared by the commands that sample a signal.
type signalFlags struct {
	class      string
	rules      string
	period     float64
	minPeriod  float64
	maxSamples int
	lenient    bool
	noStrict   bool
}

func (f *signalFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.class, "class", "idle", "the class counted: idle, compute, comm, other")
	fl.StringVar(&f.rules, "rules", "auto", "state classes: auto (starpu when there are StarPU worker states, else smpi), starpu, smpi")
	fl.Float64Var(&f.period, "period", 0, "sampling period Δ in trace time units (0: seed 004's rule, half the shortest time between two changes of the signal)")
	fl.Float64Var(&f.minPeriod, "min-period", 0, "floor for the automatic period, in trace time units")
	fl.IntVar(&f.maxSamples, "max-samples", 10_000_000, "the automatic period is raised so that the signal has at most this many samples")
	fl.BoolVar(&f.lenient, "lenient", false, "skip bad trace lines instead of failing")
	fl.BoolVarP(&f.noStrict, "no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)")
}

// sampled is a trace's signal with the chosen class and period.
type sampled struct {
	sig    *signal.Signal
	rules  *signal.Rules
	class  signal.Class
	period float64
	unit   string
	trace  string
}

// load reads a trace and builds its signal, choosing the period.
func (f *signalFlags) load(path string) (*sampled, error) {
	class, err := signal.ParseClass(f.class)
	if err != nil {
		return nil, usageErr(err)
	}
	var cands []*signal.Rules
	switch f.rules {
	case "auto":
		cands = []*signal.Rules{signal.StarPU(), signal.SMPI()}
	default:
		mk, ok := signal.Presets[f.rules]
		if !ok {
			return nil, usageErr(fmt.Errorf("unknown --rules %q (auto, starpu, smpi)", f.rules))
		}
		cands = []*signal.Rules{mk()}
	}
	builders := make([]*signal.Builder, len(cands))
	for i, r := range cands {
		if err := r.Compile(); err != nil {
			return nil, err
		}
		builders[i] = signal.NewBuilder(r)
	}
	in, name, closeIn, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	o := paje.DefaultOptions()
	o.Name, o.Lenient, o.NoStrict = name, f.lenient, f.noStrict
	unit := "s"
	o.OnTimeUnit = func(u string) { unit = u }
	if _, err := paje.Read(in, o, func(es []tracecast.Entity) error {
		for _, b := range builders {
			b.Add(es)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var firstErr error
	for i, b := range builders {
		sig, err := b.Build()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		s := &sampled{sig: sig, rules: cands[i], class: class, unit: unit, trace: name}
		if err := s.choosePeriod(f); err != nil {
			return nil, err
		}
		return s, nil
	}
	if len(cands) > 1 {
		return nil, fmt.Errorf("%s: neither StarPU worker states (%q on %q containers) nor SMPI rank states (%q on %q containers): nothing to count",
			name, cands[0].StateType, cands[0].ContainerType, cands[1].StateType, cands[1].ContainerType)
	}
	return nil, fmt.Errorf("%s: %w", name, firstErr)
}

// choosePeriod applies --period, or the paper's rule with its floors, and
// says what it chose.
func (s *sampled) choosePeriod(f *signalFlags) error {
	p, why, err := s.sig.Period(s.class, f.period, f.minPeriod, f.maxSamples)
	if err != nil {
		return usageErr(err)
	}
	s.period = p
	log.Info().Str("trace", s.trace).Str("rules", s.rules.Name).Int("containers", s.sig.R).Str("class", s.class.String()).
		Float64("period", p).Str("why", why).Str("unit", s.unit).Int("samples", s.sig.Samples(p)).
		Float64("t0", s.sig.T0()).Float64("end", s.sig.End).Msg("signal")
	return nil
}

// openInput opens a trace file, or standard input for "-".
func openInput(path string) (*os.File, string, func(), error) {
	if path == "-" {
		return os.Stdin, "<stdin>", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	return f, path, func() { f.Close() }, nil
}

func newSignalCmd() *cobra.Command {
	var f signalFlags
	var out string
	cmd := &cobra.Command{
		Use:   "signal [flags] TRACE -o FILE",
		Short: "Sample the event-occurrence signal of a trace (how many workers are idle, computing, ...)",
		Long: `signal reads a trace, classifies the states of the selected containers
(--rules: StarPU workers or SMPI ranks) and writes x_k, the number of
containers in --class at t_k = t_0 + kΔ, as Arrow (FILE.arrow) or CSV
(FILE.csv, or - for standard output). Period and times are in the trace's
own unit (milliseconds for StarPU).

Semantics: the innermost (top-of-stack) state decides a container's class;
states are [start, end) intervals; t_0 is the first state start among the
selected containers and samples are taken while t_k is before the last state
end. Without --period, Δ is seed 004's: half the shortest time between two
successive changes of the signal, raised to --min-period and to
(end − t_0)/--max-samples; a log line says which Δ was used and how many
samples it makes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr(fmt.Errorf("-o FILE is required (.arrow or .csv, - for CSV on standard output)"))
			}
			s, err := f.load(args[0])
			if err != nil {
				return err
			}
			return writeSignal(s, out)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output: FILE.arrow, FILE.csv or - (CSV)")
	return cmd
}

func writeSignal(s *sampled, out string) error {
	ext := strings.ToLower(filepath.Ext(out))
	if out != "-" && ext != ".csv" && ext != ".arrow" {
		return usageErr(fmt.Errorf("-o %s: the extension says the format: .arrow or .csv", out))
	}
	if ext == ".arrow" {
		meta := map[string]string{"class": s.class.String(), "period": strconv.FormatFloat(s.period, 'g', -1, 64),
			"r": strconv.Itoa(s.sig.R), "time_unit": s.unit, "rules": s.rules.Name, "t0": strconv.FormatFloat(s.sig.T0(), 'g', -1, 64)}
		sink, err := arrow.New(arrow.Options{Path: out, Tables: []arrow.Table{arrow.SampleTable(meta)}})
		if err != nil {
			return err
		}
		batch := make([]tracecast.Sample, 0, 8192)
		ctx := context.Background()
		var werr error
		flush := func() {
			if len(batch) > 0 && werr == nil {
				werr = sink.Write(ctx, tracecast.Batch{Items: batch})
			}
			batch = batch[:0]
		}
		s.sig.Sample(s.class, s.period, func(k int, t float64, x int) {
			batch = append(batch, tracecast.Sample{K: int64(k), T: t, X: int32(x)})
			if len(batch) == cap(batch) {
				flush()
			}
		})
		flush()
		if err := sink.Close(ctx); werr == nil {
			werr = err
		}
		return werr
	}
	w := os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintln(bw, "k,t,x")
	var b []byte
	s.sig.Sample(s.class, s.period, func(k int, t float64, x int) {
		b = strconv.AppendInt(b[:0], int64(k), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, t, 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(x), 10)
		b = append(b, '\n')
		bw.Write(b)
	})
	return bw.Flush()
}
