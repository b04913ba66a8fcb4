package report

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

type pageSpan struct {
	start, end float64
	value      int32
	imb        int16
	rules      int16 // index of the rule set that selected it
}

// MaxGanttValues is how many distinct state values the Gantt chart names
// (each its colour and legend entry). The values after them are shown as
// "(other CLASS states)", one per class: the legend, the page and the
// memory stay bounded whatever the number of distinct values (2M codelet
// names made a 55 MB page and took 1 GB).
const MaxGanttValues = 1000

// extends reports whether b continues a (same value at level 0, from a's
// end on): the Gantt shows one segment, and the summary counts one state
// for a run of such states (as signal.Builder does).
func (a pageSpan) extends(b pageSpan) bool {
	return a.end == b.start && a.imb == 0 && b.imb == 0 && a.value == b.value && a.rules == b.rules
}

// PageOptions configure the report.
type PageOptions struct {
	// Title names the trace (its path).
	Title string
	// Unit is the trace's time unit; "" means ms for StarPU, s otherwise.
	Unit string
	// Horizons are the forecast horizons (seconds); empty: 0.1%, 1% and
	// 10% of the run. The chart shows the middle one.
	Horizons []float64
	// MaxSegments bounds the Gantt's drawn segments; beyond it each row is
	// aggregated into GanttBins bins showing the state that covers most of
	// each (as StarVZ aggregates), so the page stays small.
	MaxSegments int
	GanttBins   int
	// MaxPoints bounds the points of the occupancy and forecast charts.
	MaxPoints int
	// MaxSpells bounds the spells whose forecasts are drawn over the
	// Gantt chart exactly (default 10 000); beyond it, per row and column
	// of GanttBins/5, the longest idle and busy spell starting there.
	MaxSpells int
	// Energy, when set, collected the energy stage's result and the power
	// samples of the run (EnergyInputs.AddTo): the page gets an energy
	// section.
	Energy *EnergyPageCollector
}

// Page is the data of the HTML report; WriteHTML renders it.
type Page struct {
	Title   string           `json:"title"`
	Summary []SummaryItem    `json:"summary"`
	Gantt   gantt            `json:"gantt"`
	Occ     occupancy        `json:"occupancy"`
	Fc      forecastChart    `json:"forecast"`
	Spells  spellsChart      `json:"spells"`
	Skill   []forecast.Score `json:"skill"`
	Energy  *energySection   `json:"energy,omitempty"`
	// starpu is the section SetStarPU adds (tables only: not in DATA).
	starpu *starpuSection
	// backfill is the section SetBackfill adds (not in DATA).
	backfill *backfillSection
	// spells is the spell forecasts' calibration table (not in DATA).
	spells *spellsSection
}

// SummaryItem is one line of the trace's summary.
type SummaryItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type gantt struct {
	Rows   []string `json:"rows"`
	Values []string `json:"values"`
	// Classes gives each value's class (idle, compute, comm, other).
	Classes []string `json:"classes"`
	T0      float64  `json:"t0"`
	T1      float64  `json:"t1"`
	// Segs holds, per row, flat triples start, end, value (seconds from
	// T0); Bins, when aggregated, per row one value index per bin (−1:
	// nothing).
	Segs       [][]float64 `json:"segs,omitempty"`
	Bins       [][]int     `json:"bins,omitempty"`
	Aggregated bool        `json:"aggregated"`
}

type occupancy struct {
	Classes []string    `json:"classes"`
	R       int         `json:"r"`
	T       []float64   `json:"t"`
	Y       [][]float64 `json:"y"` // per class, mean count over [T[i], T[i+1])
}

type forecastChart struct {
	Query    string    `json:"query"`
	Horizon  string    `json:"horizon"`
	T        []float64 `json:"t"`
	P        []float64 `json:"p"`
	Lo       []float64 `json:"lo"`
	Hi       []float64 `json:"hi"`
	Observed []float64 `json:"observed"`
}

// Page builds the report from what was collected (after Close).
func (c *PageCollector) Page() (*Page, error) {
	o := c.o
	t0, t1 := c.t0/c.perSec, c.end/c.perSec
	p := &Page{Title: o.Title}
	p.Gantt = c.gantt(t0, t1)
	if c.spells != nil {
		p.Spells, p.spells = c.spells.chart(len(c.rowNames), t0), c.spells.section(c.rowNames)
	}
	p.Occ = c.occupancy()
	p.forecasts(c)
	p.Summary = []SummaryItem{
		{"trace", o.Title},
		{"rules", c.rules.Name + ": " + c.rules.Describe()},
		{"selected containers", fmt.Sprint(c.r)},
		{"their states", fmt.Sprint(c.nStates)},
		{"run", fmt.Sprintf("%.6g s to %.6g s (%.4g s)", t0, t1, t1-t0)},
		{"entities", fmt.Sprintf("%d containers, %d states, %d variables, %d events, %d links", c.counts[tracecast.NatureContainer],
			c.counts[tracecast.NatureState], c.counts[tracecast.NatureVariable], c.counts[tracecast.NatureEvent], c.counts[tracecast.NatureLink])},
	}
	for cl := signal.Class(0); cl < signal.NumClasses; cl++ {
		v := fmt.Sprintf("%.1f%% of the containers' time", 100*c.share[cl]/(float64(c.r)*(c.end-c.t0)))
		if !(c.end > c.t0) { // no time to share (0/0)
			v = "- (the run lasts 0 s)"
		}
		p.Summary = append(p.Summary, SummaryItem{cl.String() + " share", v})
	}
	if o.Energy != nil {
		var err error
		if p.Energy, err = o.Energy.section(t0, t1, o.MaxPoints); err != nil {
			return nil, err
		}
		v := fmt.Sprintf("%.3f J measured over the run", p.Energy.MeasuredJ)
		if !slices.ContainsFunc(p.Energy.Nodes, func(n energyNode) bool { return !n.NoData }) {
			v = "unknown: no power sample within the run"
		}
		if len(p.Energy.Warnings) > 0 {
			v += fmt.Sprintf(" (%s: see Energy by state)", plural(len(p.Energy.Warnings), "warning"))
		}
		p.Summary = append(p.Summary, SummaryItem{"energy", v})
	}
	return p, nil
}

// gantt is each container's innermost state at every instant (what a
// Gantt chart shows), exactly or, past MaxSegments, aggregated into bins.
func (c *PageCollector) gantt(t0, t1 float64) gantt {
	g := gantt{Rows: c.rowNames, Values: c.names, T0: t0, T1: t1}
	for i, v := range c.names {
		cl, ok := c.folded[i]
		if !ok {
			cl = c.rules.Classify(v)
		}
		g.Classes = append(g.Classes, cl.String())
	}
	if c.exact {
		g.Segs = make([][]float64, len(c.rowNames))
		for i, n := range c.rowNames {
			g.Segs[i] = c.rows[n].segs
			if g.Segs[i] == nil {
				g.Segs[i] = []float64{}
			}
		}
		return g
	}
	g.Aggregated = true
	g.Bins = make([][]int, len(c.rowNames))
	for i, n := range c.rowNames {
		bins := make([]int, len(c.rows[n].bins))
		for b, v := range c.rows[n].bins {
			bins[b] = int(v)
		}
		g.Bins[i] = bins
	}
	return g
}

// occupancy is the mean class counts over MaxPoints bins.
func (c *PageCollector) occupancy() occupancy {
	o := occupancy{R: c.r}
	for cl := signal.Class(0); cl < signal.NumClasses; cl++ {
		o.Classes = append(o.Classes, cl.String())
	}
	if !(c.end > c.t0) {
		return o
	}
	n := len(c.occ[0])
	width := (c.end - c.t0) / float64(n)
	o.Y = make([][]float64, signal.NumClasses)
	for b := range n {
		o.T = append(o.T, round6((c.t0+float64(b)*width)/c.perSec))
		for cl := range c.occ {
			o.Y[cl] = append(o.Y[cl], round6(c.occ[cl][b]/width))
		}
	}
	return o
}

type seg struct {
	start, end float64
	value      int32
}

// naturalCompare orders names with their digit runs compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// forecasts sets the forecast chart (the middle horizon's forecasts of
// idle>=25%, at most MaxPoints of them, and their outcomes) and the skill
// table (the engine's scores at the end of the run).
func (p *Page) forecasts(c *PageCollector) {
	p.Fc = forecastChart{Query: "idle>=25%", Horizon: forecast.HorizonLabel(c.mid)}
	stride := max(1, len(c.chart)/c.o.MaxPoints)
	for i := 0; i < len(c.chart); i += stride {
		f := c.chart[i]
		p.Fc.T = append(p.Fc.T, round6(f.t))
		p.Fc.P = append(p.Fc.P, round6(f.p))
		p.Fc.Lo = append(p.Fc.Lo, nanAs(f.lo, -1))
		p.Fc.Hi = append(p.Fc.Hi, nanAs(f.hi, -1))
		p.Fc.Observed = append(p.Fc.Observed, nanAs(f.obs, -1))
	}
	for _, k := range c.skills {
		sc := forecast.Score{Run: k.Run, Query: k.Query, Horizon: k.Horizon, Method: k.Method, N: k.N, MSEP: k.MSEP, MSEMean: k.MSEMean,
			MSEPersistence: k.MSEPersistence, MSEClimatology: k.MSEClimatology, MSEKSPaper: k.MSEKSPaper,
			SkillPersistence: k.SkillPersistence, SkillClimatology: k.SkillClimatology, SkillKSPaper: k.SkillKSPaper, Coverage: k.Coverage, IntervalScore: k.IntervalScore}
		if rel := c.rel[skillKey{k.Query, k.Horizon}]; rel != nil {
			sc.Reliability = *rel
		}
		for b := range sc.Reliability {
			bin := &sc.Reliability[b]
			bin.Lo = float64(b) / 10
			if bin.N > 0 {
				bin.MeanP /= float64(bin.N)
				bin.MeanOutcome /= float64(bin.N)
			} else {
				bin.MeanP, bin.MeanOutcome = math.NaN(), math.NaN()
			}
		}
		p.Skill = append(p.Skill, sc)
	}
	slices.SortFunc(p.Skill, func(a, b forecast.Score) int {
		return cmp.Or(strings.Compare(a.Query, b.Query), cmp.Compare(a.Horizon, b.Horizon))
	})
}

func round6(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e9) / 1e9
}

// nanAs replaces NaN (JSON has none) by a sentinel the page skips.
func nanAs(x, s float64) float64 {
	if math.IsNaN(x) {
		return s
	}
	return round6(x)
}

//go:embed page.html
var pageHTML string

//go:embed page.js
var pageJS string

// pageTmpl parses page.html on first use rather than in the package's
// initializer, which cost 0.11 ms at every start of the binary. A bad
// template still panics, at the first page written (TestPageTemplate).
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(pageHTML))
})

// WriteHTML renders the report as one self-contained page: the data as
// JSON in the page, drawn by the page's own script (no network access).
func (p *Page) WriteHTML(w io.Writer) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return pageTmpl().Execute(w, map[string]any{
		"Title":         p.Title,
		"Summary":       p.Summary,
		"Skill":         skillRows(p.Skill),
		"Energy":        p.Energy,
		"StarPU":        p.starpu,
		"Backfill":      p.backfill,
		"Spells":        p.spells,
		"Data":          template.JS(strings.ReplaceAll(string(data), "</", `<\/`)),
		"Script":        template.JS(pageJS),
		"Agg":           p.Gantt.Aggregated,
		"SpellsAgg":     p.Spells.Aggregated,
		"SpellsUndrawn": p.Spells.Undrawn,
	})
}

type skillRow struct {
	Query, Horizon, N, MSE, KS, Pers, Clim, Coverage, IntervalScore string
}

func skillRows(ss []forecast.Score) []skillRow {
	pct := func(x float64) string {
		if math.IsNaN(x) {
			return "–"
		}
		return fmt.Sprintf("%+.1f%%", 100*x)
	}
	var out []skillRow
	for _, s := range ss {
		out = append(out, skillRow{s.Query, forecast.HorizonLabel(s.Horizon), fmt.Sprint(s.N), fmt.Sprintf("%.5f", s.MSEP),
			pct(s.SkillKSPaper), pct(s.SkillPersistence), pct(s.SkillClimatology), fmt.Sprintf("%.3f", s.Coverage),
			fmt.Sprintf("%.3f", s.IntervalScore)})
	}
	return out
}
