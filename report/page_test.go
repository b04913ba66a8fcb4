package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	c, err := NewPageCollector("auto")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := paje.Read(f, paje.DefaultOptions(), func(es []tracecast.Entity) error {
		return c.Write(context.Background(), tracecast.Batch{Items: es})
	}); err != nil {
		t.Fatal(err)
	}
	o.Title = path
	p, err := c.Page(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
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

// The page opens in a real headless browser without console errors, draws
// one Gantt row per worker, stays small when aggregated, and leaves a
// screenshot as a test artefact.
func TestPageInBrowser(t *testing.T) {
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium; make deps installs it): the page is not checked in a browser")
	}
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
			var problems []string
			chromedp.ListenTarget(ctx, func(ev any) {
				switch e := ev.(type) {
				case *runtime.EventExceptionThrown:
					problems = append(problems, "exception: "+e.ExceptionDetails.Error())
				case *runtime.EventConsoleAPICalled:
					if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
						problems = append(problems, "console "+string(e.Type))
					}
				}
			})
			var rows string
			var shot []byte
			start := time.Now()
			if err := chromedp.Run(ctx,
				chromedp.Navigate("file://"+html),
				chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
				chromedp.AttributeValue("body", "data-gantt-rows", &rows, nil, chromedp.ByQuery),
				chromedp.FullScreenshot(&shot, 80),
			); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: drawn in %v", tc.name, time.Since(start))
			if len(problems) > 0 {
				t.Fatalf("browser: %s", strings.Join(problems, "; "))
			}
			if n, _ := strconv.Atoi(rows); n != tc.rows {
				t.Fatalf("%s Gantt rows drawn, want %d", rows, tc.rows)
			}
			art := os.Getenv("TRACECAST_ARTIFACTS")
			if art == "" {
				art = filepath.Join(os.TempDir(), "tracecast-artifacts")
			}
			if err := os.MkdirAll(art, 0o755); err != nil {
				t.Fatal(err)
			}
			png := filepath.Join(art, "report-"+tc.name+".jpg")
			if err := os.WriteFile(png, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", png)
		})
	}
}
