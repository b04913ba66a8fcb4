package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/energy"
)

const demoTrace = "../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"

// energyPage runs what tracecast report --power runs: the trace into the
// page collector, the power streams and the trace into the energy stage
// (EnergyInputs.AddTo), and builds the page.
func buildEnergyPage(trace string, in EnergyInputs) (*Page, error) {
	// The first pass: the trace alone.
	sv, err := NewPageSurvey("auto")
	if err != nil {
		return nil, err
	}
	run := func(spec pipelines.Spec, sinks map[string]tracecast.Sink) error {
		reg := builtin.Registry()
		for id, s := range sinks {
			component.RegisterSinkValue(reg, id, s)
		}
		cfg, err := spec.Config()
		if err != nil {
			return err
		}
		return pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true})
	}
	source := pipelines.Node{ID: "trace", Type: "file", Options: map[string]any{"path": trace}, Parser: &pipelines.Node{Type: "paje"}}
	if err := run(pipelines.Spec{Name: "survey", Sources: []pipelines.Node{source},
		Sinks: []pipelines.Node{{ID: "survey", Type: "survey", Inputs: []string{"trace"}}}}, map[string]tracecast.Sink{"survey": sv}); err != nil {
		return nil, err
	}
	spec := pipelines.Spec{Name: "report", Sources: []pipelines.Node{source},
		Sinks: []pipelines.Node{{ID: "page", Type: "page", Inputs: []string{"trace"}}}}
	if err := in.AddTo(&spec, "trace", "energy-page"); err != nil {
		return nil, err
	}
	ec := NewEnergyPageCollector(in)
	c, err := sv.Collector(PageOptions{Title: trace, Energy: ec})
	if err != nil {
		return nil, err
	}
	if err := run(spec, map[string]tracecast.Sink{"page": c, "energy-page": ec}); err != nil {
		return nil, err
	}
	return c.Page()
}

func energyPage(t *testing.T, trace string, in EnergyInputs) *Page {
	t.Helper()
	p, err := buildEnergyPage(trace, in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A Kwollect stream without the run's start epoch as --offset meets no
// part of the run: the page is refused with the offset that would align
// it, as tracecast energy refuses 0 J.
func TestEnergyPageClocksDoNotMeet(t *testing.T) {
	in := EnergyInputs{Power: []string{"../testdata/power/cholesky-2cpu.kwollect.json.gz"}, Stage: energy.DefaultStageConfig()}
	_, err := buildEnergyPage(demoTrace, in)
	if err == nil || !strings.Contains(err.Error(), "the clocks do not meet") || !strings.Contains(err.Error(), "--offset") {
		t.Fatalf("%v, want the clocks that do not meet and --offset", err)
	}
}

// cli is the tracecast command, built once by the first test that needs
// it (TestMain removes it).
var cli struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cli.dir != "" {
		os.RemoveAll(cli.dir)
	}
	os.Exit(code)
}

// buildCLI returns the tracecast command, built from this tree.
func buildCLI(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() {
		if cli.dir, cli.err = os.MkdirTemp("", "tracecast-report"); cli.err != nil {
			return
		}
		cli.bin = filepath.Join(cli.dir, "tracecast")
		if out, err := exec.Command("go", "build", "-o", cli.bin, "../cmd/tracecast").CombinedOutput(); err != nil {
			cli.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.bin
}

var (
	cliClassRow = regexp.MustCompile(`^\s*(\S+)\s+(idle|compute|comm|storage|total)\s+(-?[0-9.]+)\s+([0-9.]+%)\s+([0-9.]+)\s*$`)
	cliNodeLine = regexp.MustCompile(`^(\S+): (\d+) workers, run ([0-9.]+) s, covered ([0-9.]+) s, mean power ([0-9.]+ W)$`)
)

// cliEnergy runs tracecast energy and returns its table rows (node, class,
// energy, share, occupancy) and node lines (node, workers, run, covered,
// mean power), as it prints them.
func cliEnergy(t *testing.T, bin string, args ...string) (rows, nodes [][]string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"energy", "--log-level", "warn"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tracecast energy %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := cliClassRow.FindStringSubmatch(sc.Text()); m != nil {
			rows = append(rows, m[1:])
		} else if m := cliNodeLine.FindStringSubmatch(sc.Text()); m != nil {
			nodes = append(nodes, m[1:])
		}
	}
	if len(rows) == 0 {
		t.Fatalf("tracecast energy printed no table:\n%s", out)
	}
	return rows, nodes
}

// rewriteNode writes the gzip CSV power stream src with its node renamed
// (one meter per node, from the shipped fixture), to dst; with header
// false, without its header line (to append it to another stream).
func rewriteNode(t *testing.T, src, dst, from, to string, header bool) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(zr)
	for first := true; sc.Scan(); first = false {
		if first && !header {
			continue
		}
		b.WriteString(strings.Replace(sc.Text(), ","+from+",", ","+to+",", 1) + "\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The energy section in a real browser: its rows are those tracecast energy
// prints for the same trace, power streams and options (run here, and
// compared number for number), the power is drawn under the occupancy, and
// a power stream that misses the run is said so on the page, never shown
// as 0 J.
func TestEnergyPageInBrowser(t *testing.T) {
	browser := needBrowser(t, "the energy section")
	dir := t.TempDir()
	bin := buildCLI(t)
	const pw = "../testdata/power/"
	// Two nodes: CPU1 on node1, metered by the 1 kHz fixture renamed;
	// tracecast energy takes one stream, so it reads both nodes from one
	// file.
	node0, node1, both := filepath.Join(dir, "node0.csv"), filepath.Join(dir, "node1.csv"), filepath.Join(dir, "both.csv")
	rewriteNode(t, pw+"cholesky-2cpu.watts.csv.gz", node0, "node0", "node0", true)
	rewriteNode(t, pw+"cholesky-2cpu.watts.csv.gz", node1, "node0", "node1", true)
	rewriteNode(t, pw+"cholesky-2cpu.watts.csv.gz", both, "node0", "node0", true)
	tail := filepath.Join(dir, "tail.csv")
	rewriteNode(t, pw+"cholesky-2cpu.watts.csv.gz", tail, "node0", "node1", false)
	b0, _ := os.ReadFile(both)
	b1, _ := os.ReadFile(tail)
	if err := os.WriteFile(both, append(b0, b1...), 0o644); err != nil {
		t.Fatal(err)
	}
	const epoch = 1753114530 // the Kwollect fixture's run start
	for _, tc := range []struct {
		name   string
		power  []string
		edit   func(*EnergyInputs)
		cli    []string // tracecast energy's arguments besides --trace
		nodes  int
		noData []string
		warn   []string
	}{
		{"rapl", []string{pw + "cholesky-2cpu.rapl.csv.gz"}, func(*EnergyInputs) {}, []string{"--power", pw + "cholesky-2cpu.rapl.csv.gz"}, 1, nil, nil},
		{"kwollect", []string{pw + "cholesky-2cpu.kwollect.json.gz"},
			func(in *EnergyInputs) { in.Stage.Offset, in.Metric = epoch, "wattmetre_power_watt" },
			[]string{"--power", pw + "cholesky-2cpu.kwollect.json.gz", "--offset", fmt.Sprint(epoch), "--metric", "wattmetre_power_watt"}, 1, nil, nil},
		{"gaps", []string{pw + "cholesky-2cpu.gaps.jsonl.gz"}, func(in *EnergyInputs) { in.Stage.MaxGap = 0.1 },
			[]string{"--power", pw + "cholesky-2cpu.gaps.jsonl.gz", "--max-gap", "0.1"}, 1, nil, []string{"node node0: 1 gap in the power samples"}},
		{"two-nodes", []string{node0, node1}, func(in *EnergyInputs) { in.Stage.Map = map[string]string{"CPU1": "node1"} },
			[]string{"--power", both, "--map", "CPU1=node1"}, 2, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := EnergyInputs{Power: tc.power, Stage: energy.DefaultStageConfig()}
			tc.edit(&in)
			p := energyPage(t, demoTrace, in)
			got := openPage(t, browser, p, "energy-"+tc.name)
			if got.GanttRows != "2" {
				t.Fatalf("%s Gantt rows drawn, want 2", got.GanttRows)
			}
			rows, nodes := cliEnergy(t, bin, append([]string{"--trace", demoTrace}, tc.cli...)...)
			if !slices.Equal(got.NoData, tc.noData) {
				t.Fatalf("nodes without power data %v, want %v", got.NoData, tc.noData)
			}
			// The page shows tracecast energy's rows, except those of the
			// nodes it has no data for: not a silent 0 J.
			var want [][]string
			for _, r := range rows {
				if !slices.Contains(tc.noData, r[0]) {
					want = append(want, r)
				}
			}
			if fmt.Sprint(got.Energy) != fmt.Sprint(want) {
				t.Fatalf("energy rows on the page:\n%v\ntracecast energy printed:\n%v", got.Energy, want)
			}
			if len(nodes) != tc.nodes || len(got.Nodes) != tc.nodes {
				t.Fatalf("node lines: page %v, tracecast energy %v", got.Nodes, nodes)
			}
			for i, n := range nodes {
				if slices.Contains(tc.noData, n[0]) {
					n[4] = "–" // no mean power over no covered time
				}
				if fmt.Sprint(got.Nodes[i]) != fmt.Sprint(n) {
					t.Fatalf("node line on the page %v, tracecast energy %v", got.Nodes[i], n)
				}
			}
			all := strings.Join(got.Warnings, "\n")
			for _, w := range tc.warn {
				if !strings.Contains(all, w) {
					t.Fatalf("no warning saying %q on the page:\n%s", w, all)
				}
			}
			if len(tc.warn) == 0 && len(got.Warnings) > 0 {
				t.Fatalf("warnings: %s", all)
			}
			if got.PowerSeries != fmt.Sprint(tc.nodes) {
				t.Fatalf("%s power series drawn, want %d", got.PowerSeries, tc.nodes)
			}
			if drawn := got.PowerPoints != "0"; drawn != (len(tc.noData) == 0) {
				t.Fatalf("%s power points drawn", got.PowerPoints)
			}
		})
	}
}

// The section's power chart stays small whatever the meter's rate: a
// million samples make at most MaxPoints points per node.
func TestEnergyPageSize(t *testing.T) {
	c := NewEnergyPageCollector(EnergyInputs{Power: []string{"p"}, Stage: energy.DefaultStageConfig(), MaxPowerPoints: 1 << 16})
	ss := make([]tracecast.PowerSample, 0, 1000)
	for i := range 1_000_000 {
		ss = append(ss, tracecast.PowerSample{T: float64(i) * 1e-5, Node: "node0", Watts: 100 + float64(i%7)})
		if len(ss) == cap(ss) {
			if err := c.Write(context.Background(), tracecast.Batch{Stream: "p", Items: ss}); err != nil {
				t.Fatal(err)
			}
			ss = ss[:0]
		}
	}
	if c.kept > 1<<16 {
		t.Fatalf("%d samples kept", c.kept)
	}
	pc := c.chart([]string{"node0"}, 0, 10, 3000)
	if n := len(pc.Series[0].T); n > 3000 || n < 2900 {
		t.Fatalf("%d points", n)
	}
}

// tracecast report --power writes the energy section with tracecast
// energy's numbers; the power options without --power, a bad --map or
// format are usage errors (exit 2), and a power file that cannot be read
// fails naming it (exit 1).
func TestReportCommandPower(t *testing.T) {
	bin := buildCLI(t)
	dir := t.TempDir()
	rapl := "../testdata/power/cholesky-2cpu.rapl.csv.gz"
	rows, _ := cliEnergy(t, bin, "--trace", demoTrace, "--power", rapl, "--map", "CPU1=node1")
	out := filepath.Join(dir, "report.html")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the page (exit 0) or on stderr
	}{
		{"power", []string{"--power", rapl, "--map", "CPU1=node1"}, 0, ""},
		{"option without power", []string{"--offset", "5"}, 2, "--offset is an option of the power streams: give --power"},
		{"bad map", []string{"--power", rapl, "--map", "CPU1"}, 2, `--map "CPU1": want CONTAINER=NODE`},
		{"bad format", []string{"--power", rapl, "--power-format", "xml"}, 2, "xml"},
		{"bad max gap", []string{"--power", rapl, "--max-gap", "0"}, 2, "max_gap"},
		{"missing file", []string{"--power", filepath.Join(dir, "nope.csv")}, 1, "nope.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(out)
			cmd := exec.Command(bin, append([]string{"report", demoTrace, "-o", out, "--log-level", "warn"}, tc.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr.String())
			}
			if code != 0 {
				if !strings.Contains(stderr.String(), tc.want) {
					t.Fatalf("stderr %q does not say %q", stderr.String(), tc.want)
				}
				return
			}
			html, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// node1 has no meter: no row of 0 J, a row saying so.
			if !bytes.Contains(html, []byte(`<tr class="nodata" data-node="node1">`)) || !bytes.Contains(html, []byte("node node1: no power sample of this node")) {
				t.Error("the page does not say that node1 has no power data")
			}
			for _, r := range rows {
				if r[0] == "node1" {
					if bytes.Contains(html, []byte(`data-node="node1" data-class=`)) {
						t.Errorf("the page shows energy rows of node1")
					}
					continue
				}
				cells := fmt.Sprintf(`<tr data-node="%s" data-class="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`, r[0], r[1], r[0], r[1], r[2], r[3], r[4])
				if r[1] == "total" {
					cells = fmt.Sprintf(`<tr class="total" data-node="%s" data-class="total"><td>%s</td><td>total</td><td>%s</td><td>%s</td><td>%s</td></tr>`, r[0], r[0], r[2], r[3], r[4])
				}
				if !bytes.Contains(html, []byte(cells)) {
					t.Errorf("the page lacks tracecast energy's row %v", r)
				}
			}
		})
	}
}

// The power stream built into the binary gives the demo's report a full
// energy section: the run covered, no warning.
func TestDemoPowerSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), pipelines.DemoPowerName)
	if err := os.WriteFile(path, pipelines.DemoPower(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := energyPage(t, demoTrace, EnergyInputs{Power: []string{path}, Stage: energy.DefaultStageConfig()})
	e := p.Energy
	if len(e.Warnings) > 0 || len(e.Nodes) != 1 || e.Nodes[0].NoData || e.Nodes[0].CoveredS < 0.999*e.Nodes[0].RunS || !(e.StreamJ > e.MeasuredJ) {
		t.Fatalf("energy section %+v", e)
	}
}
