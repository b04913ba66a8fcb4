package report

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// page builds the report of a shipped trace.
func page(t *testing.T, path string, o PageOptions) *Page {
	t.Helper()
	o.Title = path
	p, err := pageOfFile(path, "auto", o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readTrace hands a trace file's entities to sink in the parser's batches
// (without watermarks: the collector draws everything at Close).
func readTrace(path string, sink tracecast.Sink) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = paje.Read(f, paje.DefaultOptions(), func(es []tracecast.Entity) error {
		return sink.Write(context.Background(), tracecast.Batch{Items: es, Watermark: math.NaN()})
	})
	return err
}

// pageOfFile is the report of a trace file, read twice as the report
// command reads it.
func pageOfFile(path, rules string, o PageOptions) (*Page, error) {
	s, err := NewPageSurvey(rules)
	if err != nil {
		return nil, err
	}
	if err := readTrace(path, s); err != nil {
		return nil, err
	}
	c, err := s.Collector(o)
	if err != nil {
		return nil, err
	}
	if err := readTrace(path, c); err != nil {
		return nil, err
	}
	if err := c.Close(context.Background()); err != nil {
		return nil, err
	}
	return c.Page()
}

// pageOfBatches is the report of batches of entities, given twice.
func pageOfBatches(rules string, o PageOptions, batches ...tracecast.Batch) (*Page, *PageCollector, error) {
	s, err := NewPageSurvey(rules)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range batches {
		s.Write(context.Background(), b)
	}
	c, err := s.Collector(o)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range batches {
		if err := c.Write(context.Background(), b); err != nil {
			return nil, nil, err
		}
	}
	if err := c.Close(context.Background()); err != nil {
		return nil, nil, err
	}
	p, err := c.Page()
	return p, c, err
}

func TestInnermost(t *testing.T) {
	// A: GEMM [0, 10) at level 0 with FetchingInput [2, 4) nested, then
	// Sleeping [10, 12); B starts at 5.
	ss := []pageSpan{{0, 10, 1, 0, 0}, {2, 4, 2, 1, 0}, {10, 12, 3, 0, 0}, {5, 6, 4, 0, 0}}
	got := innermost(ss[:3], 1)
	want := []seg{{0, 2, 1}, {2, 4, 2}, {4, 10, 1}, {10, 12, 3}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	// Bins of 3: [3, 6) is 1 of FetchingInput against 2 of GEMM.
	if b := binDominant(want, 0, 3, 4); b[0] != 1 || b[1] != 1 || b[2] != 1 || b[3] != 3 {
		t.Fatalf("bins %v", b)
	}
	for _, c := range [][2]string{{"CPU2", "CPU10"}, {"a9b", "a10a"}, {"rank-1", "rank-01x"}} {
		if naturalCompare(c[0], c[1]) >= 0 || naturalCompare(c[1], c[0]) <= 0 {
			t.Errorf("%q should sort before %q", c[0], c[1])
		}
	}
}

// needBrowser returns the headless browser for a test of what, skipping
// the test without one — or failing it when the CI environment variable is
// set, as the DuckDB check does: CI does not pass without the check.
func needBrowser(t testing.TB, what string) string {
	t.Helper()
	if b := browserPath(); b != "" {
		return b
	}
	msg := "no chromium on PATH (apt-get install chromium; make deps installs it): " + what + " is not checked in a browser"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; a browser is required under CI", msg)
	}
	t.Skip(msg)
	return ""
}

// browserPath is the headless browser the page tests use, or "".
func browserPath() string {
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// shown is what the browser drew and shows of a page.
type shown struct {
	GanttRows   string     `json:"ganttRows"`
	PowerSeries string     `json:"powerSeries"`
	PowerPoints string     `json:"powerPoints"`
	Energy      [][]string `json:"energy"`   // node, class, energy, share, occupancy
	Nodes       [][]string `json:"nodes"`    // node, workers, run, covered, mean power
	Warnings    []string   `json:"warnings"` // the energy section's
	NoData      []string   `json:"noData"`   // nodes shown without power data
}

// readPage is the script that reads shown from the page.
const readPage = `(() => {
  const cells = sel => Array.from(document.querySelectorAll(sel)).map(tr => Array.from(tr.cells).map(td => td.textContent.trim()));
  return {
    ganttRows: document.body.dataset.ganttRows || "",
    powerSeries: document.body.dataset.powerSeries || "",
    powerPoints: document.body.dataset.powerPoints || "",
    energy: cells("#energy-table tr[data-class]"),
    nodes: cells("#energy-nodes tr[data-node]"),
    warnings: Array.from(document.querySelectorAll("#energy-warnings li")).map(li => li.textContent.trim()),
    noData: Array.from(document.querySelectorAll("#energy-table tr.nodata")).map(tr => tr.dataset.node),
  };
})()`

// openPage writes p, opens it in the headless browser, fails on a console
// error or an exception, writes the screenshot artefact report-NAME.jpg
// (TRACECAST_ARTIFACTS, else the temporary directory's
// tracecast-artifacts), and returns what the page shows.
func openPage(t *testing.T, browser string, p *Page, name string) shown {
	t.Helper()
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(html); st.Size() > 10<<20 {
		t.Fatalf("%d bytes: over 10 MB", st.Size())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1300, 1600))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				problems = append(problems, "console "+string(e.Type))
			}
		}
	})
	var got shown
	var shot []byte
	start := time.Now()
	if err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+html),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Evaluate(readPage, &got),
		chromedp.FullScreenshot(&shot, 80),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: drawn in %v", name, time.Since(start))
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("browser: %s", strings.Join(problems, "; "))
	}
	art := os.Getenv("TRACECAST_ARTIFACTS")
	if art == "" {
		art = filepath.Join(os.TempDir(), "tracecast-artifacts")
	}
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(art, "report-"+name+".jpg")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", png)
	return got
}

// The page opens in a real headless browser without console errors, draws
// one Gantt row per worker, stays small when aggregated, and leaves a
// screenshot as a test artefact.
func TestPageInBrowser(t *testing.T) {
	browser := needBrowser(t, "the page")
	for _, tc := range []struct {
		name, path string
		rows       int
		o          PageOptions
	}{
		{"exact", "../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", 2, PageOptions{}},
		{"aggregated", "../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", 2, PageOptions{MaxSegments: 1000, GanttBins: 500}},
		{"smpi", "../testdata/smpi/jacobi-8.trace.gz", 8, PageOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := page(t, tc.path, tc.o)
			if p.Gantt.Aggregated != (tc.o.MaxSegments != 0) {
				t.Fatalf("aggregated %v", p.Gantt.Aggregated)
			}
			got := openPage(t, browser, p, tc.name)
			if n, _ := strconv.Atoi(got.GanttRows); n != tc.rows {
				t.Fatalf("%s Gantt rows drawn, want %d", got.GanttRows, tc.rows)
			}
			if len(got.Energy) > 0 || got.PowerSeries != "" {
				t.Fatalf("an energy section without power streams: %+v", got)
			}
		})
	}
}

// TestBrowserRequiredUnderCI: without a browser the browser tests skip,
// saying so — but under CI (the CI environment variable set) they fail, as
// the DuckDB check does: CI must not pass without the check it is for.
func TestBrowserRequiredUnderCI(t *testing.T) {
	if os.Getenv("TRACECAST_BROWSER_CHILD") != "" {
		t.Skip("the child run")
	}
	for _, tc := range []struct {
		ci       string
		fail     bool
		want     string
		testName string
	}{
		{"", false, "--- SKIP: TestPageInBrowser", "TestPageInBrowser"},
		{"true", true, "required under CI", "TestPageInBrowser"},
		{"", false, "--- SKIP: TestEnergyPageInBrowser", "TestEnergyPageInBrowser"},
		{"1", true, "required under CI", "TestEnergyPageInBrowser"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+tc.testName+"$", "-test.count=1", "-test.v")
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "CI=") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "PATH="+t.TempDir(), "CI="+tc.ci, "TRACECAST_BROWSER_CHILD=1")
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fail || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s with CI=%q and no browser: %v, want failed %v and %q:\n%s", tc.testName, tc.ci, err, tc.fail, tc.want, out)
		}
	}
}

// A run of zero length (one instant of states) has no share of time in any
// class: the summary says so instead of "NaN% of the containers' time".
func TestZeroLengthRunShares(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instant.trace")
	trace := `%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeSetState 10
% Time date
% Type string
% Container string
% Value string
%EndEventDef
0 1 0 MPI
2 2 1 MPI_STATE
6 0 r0 1 0 rank-0
10 5 2 r0 PMPI_Recv
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	p := page(t, path, PageOptions{MaxPoints: 100})
	n := 0
	for _, it := range p.Summary {
		if strings.HasSuffix(it.Name, " share") {
			n++
			if strings.Contains(it.Value, "NaN") || !strings.Contains(it.Value, "0 s") {
				t.Errorf("%s: %q", it.Name, it.Value)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no share in the summary %+v", p.Summary)
	}
}
