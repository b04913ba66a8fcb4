package iobench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/stages/iotime"
)

// PredictionSchema is the version of iopredict's JSON output.
const PredictionSchema = "tracecast.iopredict/v1"

// PredCat is the prediction for one category.
type PredCat struct {
	Category string `json:"category"`
	Calls    int64  `json:"calls"`
	// RefTime is the application's time in the category on the reference
	// (from the profile); RefBench and TargetBench the benchmark's mean
	// time per call on each system; Ratio = TargetBench/RefBench (eq. 1),
	// 1 when the category was not benchmarked on both.
	RefTime     float64 `json:"ref_time_s"`
	RefBench    float64 `json:"ref_bench_s"`
	TargetBench float64 `json:"target_bench_s"`
	Ratio       float64 `json:"ratio"`
	Benchmarked bool    `json:"benchmarked"`
	// Predicted = Ratio × RefTime (a term of eq. 2).
	Predicted float64 `json:"predicted_s"`
	// Actual is the time measured on the target (with --actual), and
	// ErrorPct = 100·(Predicted − Actual)/Actual (eq. 3).
	Actual   *float64 `json:"actual_s,omitempty"`
	ErrorPct *float64 `json:"error_pct,omitempty"`
}

// Prediction is the result of eq. 1–3 over all categories.
type Prediction struct {
	Schema    string `json:"schema"`
	Reference string `json:"reference_fs"`
	Target    string `json:"target_fs"`
	// Stat is the benchmark statistic of eq. 1 (mean or median);
	// Overhead the tracer's cost per call taken out before scaling.
	Stat       string    `json:"stat"`
	Overhead   float64   `json:"overhead_s"`
	Categories []PredCat `json:"categories"`
	RefTotal   float64   `json:"ref_total_s"`
	Predicted  float64   `json:"predicted_total_s"`
	Actual     *float64  `json:"actual_total_s,omitempty"`
	ErrorPct   *float64  `json:"error_pct,omitempty"`
	// Unbenchmarked is the share of the reference I/O time in categories
	// missing from a benchmark (predicted with ratio 1).
	Unbenchmarked float64 `json:"unbenchmarked_share"`
}

func errPct(pred, act float64) *float64 {
	if act == 0 {
		return nil
	}
	e := 100 * (pred - act) / act
	return &e
}

// CalibratedCap bounds a category's tracer overhead per call, in units of
// the calibrated δ (see PredictOptions.Calibrated).
const CalibratedCap = 10

// PredictOptions refine eq. 2.
type PredictOptions struct {
	// Median uses the benchmark's median time per call in eq. 1 instead
	// of its mean (robust to a noisy machine).
	Median bool
	// Overhead is the tracer's own cost per call (seconds) included in
	// every traced duration (strace -T: ptrace stops): it is taken out of
	// the reference time before scaling and added back, since the run on
	// the target is traced too: predicted_i = ratio_i·(T_i − n_i·δ) + n_i·δ.
	// A negative value estimates it as the shortest call in the profile;
	// 0 applies eq. 2 as the seed does.
	Overhead float64
	// Calibrated estimates the tracer's cost from the reference: per
	// benchmarked category, the surplus of the traced mean time per call
	// over the benchmark's untraced mean on the same system,
	// s_i = max(T_i/n_i − B_i(ref), 0); δ is the call-weighted median of the
	// s_i (the tracer's cost is per call, about the same for every
	// category), and category i keeps min(s_i, CalibratedCap·δ) per call
	// unscaled (a category with few calls suffers more from scheduling
	// stops, but a surplus far beyond δ is device time the benchmark did
	// not reproduce, and is scaled). Overrides Overhead.
	Calibrated bool
}

// SetStat sets the benchmark statistic of eq. 1 by name: mean (the seed's)
// or median.
func (o *PredictOptions) SetStat(name string) error {
	switch name {
	case "mean":
		o.Median = false
	case "median":
		o.Median = true
	default:
		return fmt.Errorf("unknown statistic %q (mean or median)", name)
	}
	return nil
}

// SetOverhead sets the tracer's cost per call from its text form: auto
// (the shortest call in the profile), calibrated (see Calibrated), or a
// duration such as 2us ("0": eq. 2 as the seed wrote it).
func (o *PredictOptions) SetOverhead(s string) error {
	switch s {
	case "auto":
		o.Overhead, o.Calibrated = -1, false
	case "calibrated":
		o.Overhead, o.Calibrated = 0, true
	default:
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("bad overhead %q (auto, calibrated or a duration such as 2us)", s)
		}
		o.Overhead, o.Calibrated = d.Seconds(), false
	}
	return nil
}

// Predict applies eq. 1–3: per-category ratios of the target's benchmark
// time to the reference's, the predicted total Σ ratio × reference time,
// and, when actual is not nil, the error per category and in total.
// Actual calls in categories the profile lacks count in the actual total.
func Predict(prof iotime.Summary, ref, target *Result, actual *iotime.Summary, o PredictOptions) Prediction {
	p := Prediction{Schema: PredictionSchema, Reference: ref.FS, Target: target.FS, Stat: "mean"}
	if o.Median {
		p.Stat = "median"
	}
	delta := o.Overhead
	if delta < 0 {
		delta = 0
		for _, c := range prof.Categories {
			if c.MinDur > 0 && (delta == 0 || c.MinDur < delta) {
				delta = c.MinDur
			}
		}
	}
	if o.Calibrated {
		delta = calibrate(prof, ref, o.Median)
	}
	p.Overhead = delta
	var unb float64
	for _, c := range prof.Categories {
		pc := PredCat{Category: c.Key, Calls: c.Calls, RefTime: c.Time, Ratio: 1}
		r, ok1 := ref.Category(c.Key)
		t, ok2 := target.Category(c.Key)
		rb, tb := r.MeanS, t.MeanS
		if o.Median {
			rb, tb = r.MedianS, t.MedianS
		}
		if ok1 && ok2 && rb > 0 && tb > 0 {
			pc.RefBench, pc.TargetBench = rb, tb
			pc.Ratio = tb / rb
			pc.Benchmarked = true
		} else {
			unb += c.Time
		}
		fixed := min(float64(c.Calls)*delta, pc.RefTime)
		if o.Calibrated && pc.Benchmarked {
			// this category's own surplus over the benchmark, up to
			// CalibratedCap·δ: beyond that it is the device, not the tracer
			fixed = min(max(pc.RefTime-float64(c.Calls)*rb, 0), float64(c.Calls)*CalibratedCap*delta)
		}
		pc.Predicted = pc.Ratio*(pc.RefTime-fixed) + fixed
		p.RefTotal += pc.RefTime
		p.Predicted += pc.Predicted
		p.Categories = append(p.Categories, pc)
	}
	if p.RefTotal > 0 {
		p.Unbenchmarked = unb / p.RefTotal
	}
	if actual != nil {
		var tot float64
		seen := map[string]bool{}
		for i := range p.Categories {
			pc := &p.Categories[i]
			seen[pc.Category] = true
			a := 0.0
			if s, ok := actual.Category(pc.Category); ok {
				a = s.Time
			}
			pc.Actual = &a
			pc.ErrorPct = errPct(pc.Predicted, a)
			tot += a
		}
		for _, s := range actual.Categories {
			if !seen[s.Key] {
				a := s.Time
				p.Categories = append(p.Categories, PredCat{Category: s.Key, Actual: &a, Ratio: math.NaN()})
				tot += a
			}
		}
		p.Actual = &tot
		p.ErrorPct = errPct(p.Predicted, tot)
	}
	sort.SliceStable(p.Categories, func(i, j int) bool { return p.Categories[i].RefTime > p.Categories[j].RefTime })
	for i := range p.Categories {
		if math.IsNaN(p.Categories[i].Ratio) {
			p.Categories[i].Ratio = 0
		}
	}
	return p
}

// ReadResult reads a BENCH.json file and checks its schema.
func ReadResult(path string) (*Result, error) {
	f, _, closeIn, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	var r Result
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	// Eq. 1 divides these times: a negative one would predict a negative
	// I/O time, and of a category given twice either could be meant.
	seen := map[string]bool{}
	for _, c := range r.Categories {
		if seen[c.Category] {
			return nil, fmt.Errorf("%s: category %q given twice", path, c.Category)
		}
		seen[c.Category] = true
		for _, v := range []struct {
			name string
			v    float64
		}{{"gap_s", c.GapS}, {"mean_s", c.MeanS}, {"min_s", c.MinS}, {"median_s", c.MedianS}, {"total_s", c.TotalS}} {
			if !(v.v >= 0) || math.IsInf(v.v, 0) {
				return nil, fmt.Errorf("%s: category %q: %s %g is not a time", path, c.Category, v.name, v.v)
			}
		}
	}
	return &r, nil
}

// WriteJSON writes v indented.
func WriteJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	return e.Encode(v)
}

// calibrate is the call-weighted median of max(T_i/n_i − B_i(ref), 0).
func calibrate(prof iotime.Summary, ref *Result, median bool) float64 {
	type d struct {
		v float64
		n int64
	}
	var ds []d
	var total int64
	for _, c := range prof.Categories {
		r, ok := ref.Category(c.Key)
		b := r.MeanS
		if median {
			b = r.MedianS
		}
		if !ok || b <= 0 || c.Calls == 0 {
			continue
		}
		ds = append(ds, d{max(c.Time/float64(c.Calls)-b, 0), c.Calls})
		total += c.Calls
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].v < ds[j].v })
	var acc int64
	for _, x := range ds {
		acc += x.n
		if 2*acc >= total {
			return x.v
		}
	}
	return 0
}
