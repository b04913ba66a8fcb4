package specs

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/internal/paths"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/report"
	tcsv "github.com/tracecast/tracecast/sinks/csv"
)

// Tasks are the options of the tasks pipeline: task records of StarPU
// traces, with their energy when each trace has a power stream.
type Tasks struct {
	Traces []string
	// Powers, when given, is one power stream per trace, in order.
	Powers   []string `flag:"power" help:"power stream of the trace (repeat: one per trace, in order)"`
	TimeUnit string   `flag:"time-unit" help:"unit of the traces' times: s, ms (StarPU), us, ns"`
	Attribution
	// Out is the output file ("" or "-": stdout); Format jsonl, arrow,
	// parquet or csv ("": from Out's extension, which must be known; jsonl
	// on standard output).
	Out     string `flag:"output,o" help:"output file: .jsonl, .csv, .arrow or .parquet (default: JSON lines on standard output)"`
	Format  string `flag:"format" help:"jsonl, arrow, parquet or csv (default: from -o's extension; arrow and parquet need -o)"`
	Lenient bool   `flag:"lenient" help:"skip bad trace and power lines instead of failing"`
	// The trace reader's limits (all zero: the defaults).
	paje.Limits
}

// DefaultTasks are the tasks command's defaults.
func DefaultTasks() Tasks {
	return Tasks{TimeUnit: "ms", Attribution: DefaultAttribution(), Limits: paje.DefaultLimits()}
}

// Tasks runs the tasks pipeline: the records go to o.Out (stdout when
// none), and the returned summary counted them as they passed (only CSV,
// whose header needs every parameter name, holds them all).
func (r Runner) Tasks(ctx context.Context, o Tasks, stdout io.Writer) (*report.TaskSummary, error) {
	format, mapping, err := o.check()
	if err != nil {
		return nil, err
	}
	var all []tracecast.Task
	sum := report.NewTaskSummary()
	collect := pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if ts, ok := b.Items.([]tracecast.Task); ok {
			sum.Add(ts)
			if format == "csv" {
				all = append(all, ts...)
			}
		}
		return nil
	})
	if err := r.Run(ctx, o.spec(mapping, format), map[string]tracecast.Sink{"collect": collect}); err != nil {
		return nil, err
	}
	if format != "csv" {
		return sum, nil
	}
	if o.Out == "" || o.Out == "-" {
		return sum, tcsv.WriteTasks(stdout, all)
	}
	if err := output.WriteFile(o.Out, func(w io.Writer) error { return tcsv.WriteTasks(w, all) }); err != nil {
		return nil, err
	}
	return sum, nil
}

// check validates the options: the output format and the worker mapping.
func (o Tasks) check() (format string, mapping map[string]string, err error) {
	bad := func(format string, a ...any) (string, map[string]string, error) {
		return "", nil, &OptionError{Msgs: []string{fmt.Sprintf(format, a...)}}
	}
	format = o.Format
	toStdout := o.Out == "" || o.Out == "-"
	if format == "" && !toStdout {
		// The extension says the format; an unknown one is refused, not
		// written as JSON lines under a name that says otherwise.
		switch ext := strings.ToLower(filepath.Ext(o.Out)); ext {
		case ".jsonl", ".ndjson", ".json":
			format = "jsonl"
		case ".csv":
			format = "csv"
		case ".arrow", ".parquet":
			format = ext[1:]
		default: // .gz too: the outputs are not compressed
			return bad("-o %s: the extension says the format: .jsonl, .csv, .arrow or .parquet (or give --format)", o.Out)
		}
	}
	switch format {
	case "", "jsonl":
		format = "jsonl"
	case "csv":
	case "arrow", "parquet":
		if toStdout {
			return bad("--format %s needs -o FILE", format)
		}
	default:
		return bad("unknown --format %q (jsonl, arrow, parquet, csv)", format)
	}
	if len(o.Powers) > 0 && len(o.Powers) != len(o.Traces) {
		return bad("%d --power for %d traces: give one power stream per trace, in order", len(o.Powers), len(o.Traces))
	}
	if _, err := power.ParseFormat(o.PowerFormat); err != nil {
		return bad("%v", err)
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); !ok {
		return bad("unknown --time-unit %q (s, ms, us, ns)", o.TimeUnit)
	}
	mapping = map[string]string{}
	for _, m := range o.Map {
		c, n, ok := strings.Cut(m, "=")
		if !ok || c == "" || n == "" {
			return bad("--map %q: want CONTAINER=NODE", m)
		}
		mapping[c] = n
	}
	if format == "csv" && o.Out != "" && o.Out != "-" {
		if err := paths.CheckOutputs(append(append([]string(nil), o.Traces...), o.Powers...), o.Out); err != nil {
			return bad("%v", err)
		}
	}
	return format, mapping, nil
}

// spec is the tasks pipeline: each trace (paje, user-defined fields kept)
// into the tasks stage — one stage per trace with its power stream when
// there is power, else one for all — and the stages into the output sink
// (jsonl, arrow or parquet; csv is written by Tasks) and the "collect"
// sink.
func (o Tasks) spec(mapping map[string]string, format string) pipelines.Spec {
	spec := pipelines.Spec{Name: "tasks"}
	var stageIDs, allTraces []string
	for i, tr := range o.Traces {
		id := fmt.Sprintf("trace%d", i)
		spec.Sources = append(spec.Sources, pajeSource(id, tr, o.Limits, map[string]any{"lenient": o.Lenient, "user_defined": true}))
		allTraces = append(allTraces, id)
		if len(o.Powers) == 0 {
			continue
		}
		pid := fmt.Sprintf("power%d", i)
		spec.Sources = append(spec.Sources, pipelines.Node{ID: pid, Type: "file", Options: map[string]any{"path": o.Powers[i]},
			Parser: &pipelines.Node{Type: "power", Options: map[string]any{"format": o.PowerFormat, "lenient": o.Lenient, "node": o.Node}}})
		opts := map[string]any{"time_unit": o.TimeUnit, "energy": true, "node": o.Node, "node_type": o.NodeType,
			"offset": o.Offset, "max_gap": o.MaxGap, "lateness": o.Lateness}
		if len(mapping) > 0 {
			opts["map"] = mapping
		}
		sid := fmt.Sprintf("tasks%d", i)
		spec.Stages = append(spec.Stages, pipelines.Node{ID: sid, Type: "tasks", Inputs: []string{id, pid}, Options: opts})
		stageIDs = append(stageIDs, sid)
	}
	if len(o.Powers) == 0 {
		spec.Stages = append(spec.Stages, pipelines.Node{ID: "tasks", Type: "tasks", Inputs: allTraces, Options: map[string]any{"time_unit": o.TimeUnit}})
		stageIDs = []string{"tasks"}
	}
	spec.Sinks = append(spec.Sinks, collect("collect", stageIDs...))
	out := o.Out
	if out == "" {
		out = "-"
	}
	switch format {
	case "jsonl":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "jsonl", Inputs: stageIDs, Options: map[string]any{"path": out, "records": "tasks"}})
	case "arrow":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "arrow", Inputs: stageIDs, Options: map[string]any{"path": out, "format": "file", "records": "tasks"}})
	case "parquet":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "parquet", Inputs: stageIDs, Options: map[string]any{"path": out, "records": "tasks"}})
	}
	return spec
}
