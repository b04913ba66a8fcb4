package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"
)

// Replay summarizes the entities a replay pipeline wrote: records by nature,
// the workers and their time by state value.
type Replay struct {
	// ByNature counts records: Container, State, Variable, Event, Link.
	ByNature map[string]int
	// Workers are the containers with "Worker State" states.
	Workers int
	// End is the latest end time, in trace units.
	End float64
	// StateTime is the time in "Worker State" states per value, over all
	// imbrication levels.
	StateTime map[string]float64
}

// ReadReplay reads entity records as JSON lines (the jsonl sink's output);
// name is how errors call the input.
func ReadReplay(r io.Reader, name string) (Replay, error) {
	s := Replay{ByNature: map[string]int{}, StateTime: map[string]float64{}}
	workers := map[string]bool{}
	err := eachJSON(r, name, func(line []byte) error {
		var rec struct {
			Nature, Container, Type, Value string
			Start, End                     float64
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		s.ByNature[rec.Nature]++
		s.End = max(s.End, rec.End)
		if rec.Nature == "State" && rec.Type == "Worker State" {
			s.StateTime[rec.Value] += rec.End - rec.Start
			workers[rec.Container] = true
		}
		return nil
	})
	s.Workers = len(workers)
	return s, err
}

// Share is a state value's share of the worker time.
type Share struct {
	Value    string
	Fraction float64
}

// TopStates returns the n state values with the most worker time, most
// first (ties by value), with their fraction of all worker time.
func (s Replay) TopStates(n int) []Share {
	total := 0.0
	var out []Share
	for v, d := range s.StateTime {
		total += d
		out = append(out, Share{Value: v, Fraction: d})
	}
	slices.SortFunc(out, func(a, b Share) int {
		return cmp.Or(cmp.Compare(b.Fraction, a.Fraction), cmp.Compare(a.Value, b.Value))
	})
	out = out[:min(n, len(out))]
	for i := range out {
		out[i].Fraction /= total
	}
	return out
}

// Predictions summarizes what a prediction pipeline wrote: its windows,
// verdicts, alerts and the likelihoods it predicted per query.
type Predictions struct {
	Windows, Verdicts, Hits int
	// Alerts counts alerts by kind.
	Alerts map[string]int
	// Horizon is the predictions' horizon in seconds.
	Horizon float64
	// Likelihoods are the predicted likelihoods per query, in order.
	Likelihoods map[string][]float64
}

// ReadPredictions reads window, prediction, verdict and alert records as
// JSON lines (the jsonl sink's output of a predict stage).
func ReadPredictions(r io.Reader, name string) (Predictions, error) {
	p := Predictions{Alerts: map[string]int{}, Likelihoods: map[string][]float64{}}
	err := eachJSON(r, name, func(line []byte) error {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		switch {
		case rec["kind"] != nil:
			kind, _ := rec["kind"].(string)
			p.Alerts[kind]++
		case rec["observed"] != nil:
			p.Verdicts++
			if rec["hit"] == true {
				p.Hits++
			}
		case rec["likelihood"] != nil:
			q, _ := rec["query"].(string)
			l, _ := rec["likelihood"].(float64)
			p.Likelihoods[q] = append(p.Likelihoods[q], l)
			p.Horizon, _ = rec["horizon_s"].(float64)
		case rec["compared"] != nil:
			p.Windows++
		}
		return nil
	})
	return p, err
}

// eachJSON calls fn with every line of r (up to 1 MiB each).
func eachJSON(r io.Reader, name string, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return sc.Err()
}

// WriteDemo writes the summary `tracecast demo` prints of its run on the
// StarPU trace built into the binary (times in ms), read in took.
func WriteDemo(w io.Writer, r Replay, took time.Duration, p Predictions) error {
	fmt.Fprintf(w, "tracecast demo: StarPU Cholesky, %d workers, %.0f ms of execution, read in %s\n", r.Workers, r.End, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  records: %d containers, %d states, %d variables, %d events, %d links\n",
		r.ByNature["Container"], r.ByNature["State"], r.ByNature["Variable"], r.ByNature["Event"], r.ByNature["Link"])
	fmt.Fprintf(w, "  worker time by state (all imbrication levels):")
	for _, s := range r.TopStates(6) {
		fmt.Fprintf(w, " %s %.1f%%", s.Value, 100*s.Fraction)
	}
	fmt.Fprintln(w)
	rate := "n/a" // no verdict: no rate, not 0 %
	if p.Verdicts > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*float64(p.Hits)/float64(p.Verdicts))
	}
	fmt.Fprintf(w, "  prediction phase: %d windows of %.3g s; %d verdicts, KS hit rate %s; alerts: %d idle opportunities, %d regime changes\n",
		p.Windows, p.Horizon, p.Verdicts, rate, p.Alerts["idle-opportunity"], p.Alerts["regime-change"])
	for _, q := range slices.Sorted(maps.Keys(p.Likelihoods)) {
		ls := p.Likelihoods[q]
		sum := 0.0
		for _, v := range ls {
			sum += v
		}
		if _, err := fmt.Fprintf(w, "  P(%s) over the next %.3g s: mean %.2f over %d predictions\n", q, p.Horizon, sum/float64(len(ls)), len(ls)); err != nil {
			return err
		}
	}
	return nil
}

// WriteDemoFiles reads what the demo's pipelines wrote — the replay's entity
// records and the prediction pipeline's records, as JSON lines — and writes
// the summary (WriteDemo), then each pipeline's output files by sink id.
func WriteDemoFiles(w io.Writer, replayRecords, predictRecords string, took time.Duration, outputs ...map[string]string) error {
	var r Replay
	var p Predictions
	err := readFile(replayRecords, func(f io.Reader) (err error) { r, err = ReadReplay(f, replayRecords); return err })
	if err == nil {
		err = readFile(predictRecords, func(f io.Reader) (err error) { p, err = ReadPredictions(f, predictRecords); return err })
	}
	if err == nil {
		err = WriteDemo(w, r, took, p)
	}
	for _, out := range outputs {
		for _, id := range slices.Sorted(maps.Keys(out)) {
			if err == nil {
				_, err = fmt.Fprintf(w, "  %-12s %s\n", id, out[id])
			}
		}
	}
	return err
}

func readFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}
