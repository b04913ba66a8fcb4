package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/parquet"
	"github.com/tracecast/tracecast/stages/energy"
)

// EnergySchema names the schema of energy.arrow and totals.arrow (and of
// their Parquet forms): the energy stage's rows, as an arrow or parquet
// sink of a pipeline writes them.
const EnergySchema = "tracecast.energy/1"

// EnergyFiles says what WriteFiles writes and with what.
type EnergyFiles struct {
	// Dir is the output directory, created if missing.
	Dir string
	// Format is the tables' format: arrow (the default, "") or parquet.
	Format string
	// Meta is the schema metadata of the tables (the run's inputs and
	// window, so that a table says where it comes from).
	Meta map[string]string
	// Series are the power samples of each node, in power time, for the
	// power plot; PlotPoints bounds how many of each node are drawn
	// (0: all).
	Series     map[string][]tracecast.PowerSample
	PlotPoints int
	// Offset is power time minus trace time, seconds: the plot draws
	// samples in trace time, under the states.
	Offset float64
}

// WriteFiles writes the report to o.Dir: energy.arrow (node × class ×
// window rows), totals.arrow (the same over the run, window -1) — or
// energy.parquet and totals.parquet —, model.json, energy.png/.svg and
// power.png/.svg. It decimates o.Series in place.
func (r *Energy) WriteFiles(o EnergyFiles) error {
	format := o.Format
	switch format {
	case "":
		format = "arrow"
	case "arrow", "parquet":
	default:
		return fmt.Errorf("energy tables: unknown format %q (arrow or parquet)", o.Format)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if err := WriteEnergyTable(filepath.Join(o.Dir, "energy."+format), o.Meta, energy.Rows(r.res.Windows)); err != nil {
		return err
	}
	if err := WriteEnergyTable(filepath.Join(o.Dir, "totals."+format), o.Meta, energy.Rows(r.res.Totals)); err != nil {
		return err
	}
	if err := r.WriteModel(filepath.Join(o.Dir, "model.json")); err != nil {
		return err
	}
	for n, s := range o.Series {
		o.Series[n] = Decimate(s, o.PlotPoints)
	}
	return WriteEnergyPlots(o.Dir, r.res, o.Series, o.Offset)
}

// WriteModel writes the report as indented JSON (model.json).
func (r *Energy) WriteModel(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return output.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteEnergyTable writes energy rows with the energy schema and meta as
// its metadata: a Parquet file when path ends in .parquet, else an Arrow
// IPC file.
func WriteEnergyTable(path string, meta map[string]string, rows []tracecast.EnergyRow) error {
	tables := []arrow.Table{arrow.StructTable[tracecast.EnergyRow](EnergySchema, meta)}
	var sink tracecast.Sink
	var err error
	if filepath.Ext(path) == ".parquet" {
		sink, err = parquet.New(parquet.Options{Path: path, Tables: tables})
	} else {
		sink, err = arrow.New(arrow.Options{Path: path, Tables: tables})
	}
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := sink.Write(ctx, tracecast.Batch{Items: rows}); err != nil {
		sink.(tracecast.Aborter).Abort() // PATH left as it was
		return err
	}
	return sink.Close(ctx)
}

// Decimate keeps at most about n of the samples, evenly strided (every
// k-th from the first), reusing s's array: a plot of a kHz meter over a
// long run needs no more points than it has pixels. n <= 0 keeps all.
func Decimate(s []tracecast.PowerSample, n int) []tracecast.PowerSample {
	if n <= 0 || len(s) <= n {
		return s
	}
	stride := (len(s) + n - 1) / n
	out := s[:0]
	for i := 0; i < len(s); i += stride {
		out = append(out, s[i])
	}
	return out
}
