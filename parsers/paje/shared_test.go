package paje

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/gziptest"
)

// sharedTraces is where the real traces of the study live, beside the
// repository; they may not be redistributed, so they are not in testdata.
const sharedTraces = "../../../shared/traces"

// pjdumpParity lists every trace Debian's pj_dump 1.3.6 accepts, with how it
// must be prepared (shared/traces/SOURCES.md).
var pjdumpParity = []struct {
	path   string
	sorted bool     // needs shared/tools/paje_sort.py first
	flags  []string // extra pj_dump flags (same meaning for tracecast)
}{
	{path: "MPI_HPC/smpi_simgrid.trace"},
	{path: "MPI_HPC/p2p-i-la-1.trace.gz"},
	{path: "calculParallelePSMSC/bench2b_traces/p2p-i-la-1.trace.gz"},
	{path: "calculParallelePSMSC/bench2p_traces/p2p-i-la-11.trace.gz"},
	{path: "pajeng/categories.trace"},
	{path: "pajeng/g5k.trace"},
	{path: "pajeng/gattaca.trace"},
	{path: "pajeng/ms.trace"},
	{path: "pajeng/native_sample.trace", flags: []string{"-u"}},
	{path: "pajeng/replay_output_shurakai_extract.trace"},
	{path: "pajeng/simgrid-fg126.trace"},
	{path: "pajeng/simu-mardi.trace"},
	{path: "pajeng/states.trace"},
	{path: "pajengr/simgrid.trace"},
	{path: "starpu-1.4.9-generated/cholesky_dmdas_2cpu/paje.trace.gz", flags: []string{"-u"}},
	{path: "starpu-1.4.9-generated/cholesky_dmdas_12cpu/paje.trace.gz"},
	{path: "dnn_and_starpu/paje.trace", sorted: true},
	{path: "pajeng/native_paje.trace", sorted: true, flags: []string{"-n"}},
	{path: "starpu-1.4.9-generated/lu_lws_12cpu_2numa/paje.trace.gz", sorted: true, flags: []string{"-u"}},
}

func needShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Skipf("the study's real traces are not here (%s): skipping; they live beside the repository in shared/traces", sharedTraces)
	}
}

func needPjdump(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("pj_dump")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pj_dump (Debian package pajeng) is required in CI; .ci/run installs it")
		}
		t.Skip("pj_dump not installed (apt-get install pajeng): skipping the side-by-side comparison")
	}
	return p
}

// TestPjdumpParity runs Debian's pj_dump and tracecast side by side on every
// real trace pj_dump accepts and requires identical records.
func TestPjdumpParity(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: pj_dump on every shared trace takes minutes (make test-long)")
	}
	needShared(t)
	pj := needPjdump(t)
	for _, c := range pjdumpParity {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			in := filepath.Join(sharedTraces, c.path)
			if c.sorted {
				out := filepath.Join(t.TempDir(), "sorted.trace")
				cmd := exec.Command("python3", filepath.Join(sharedTraces, "../tools/paje_sort.py"), in, out)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("paje_sort: %v\n%s", err, b)
				}
				in = out
			} else if strings.HasSuffix(in, ".gz") {
				out := filepath.Join(t.TempDir(), "plain.trace")
				if err := os.WriteFile(out, gziptest.ReadFile(t, in), 0o644); err != nil {
					t.Fatal(err)
				}
				in = out
			}
			var stdout bytes.Buffer
			cmd := exec.Command(pj, append(append([]string{}, c.flags...), in)...)
			cmd.Stdout = &stdout
			if err := cmd.Run(); err != nil {
				t.Fatalf("pj_dump: %v", err)
			}
			want := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
			sort.Strings(want)

			o := pjOpts(in)
			for _, f := range c.flags {
				switch f {
				case "-u":
					o.UserDefined = true
				case "-n":
					o.NoStrict = true
				}
			}
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, _, err := dump(t, f, o)
			if err != nil {
				t.Fatal(err)
			}
			diffLines(t, c.path, got, want)
		})
	}
}

// TestRawStarPU reads the unsorted StarPU traces as written: pj_dump
// rejects them, tracecast puts the late variable samples back in order.
// Processing stays in file order, so the only records that may differ from
// the sorted trace's are variable pieces whose samples come after their
// container's destruction in the file (pj_dump ignores those too).
func TestRawStarPU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sorts and reads two large shared traces (make test-long)")
	}
	needShared(t)
	for _, p := range []string{"dnn_and_starpu/paje.trace", "starpu-1.4.9-generated/lu_lws_12cpu_2numa/paje.trace.gz"} {
		in := filepath.Join(sharedTraces, p)
		sorted := filepath.Join(t.TempDir(), "sorted.trace")
		if b, err := exec.Command("python3", filepath.Join(sharedTraces, "../tools/paje_sort.py"), in, sorted).CombinedOutput(); err != nil {
			t.Fatalf("paje_sort: %v\n%s", err, b)
		}
		o := DefaultOptions()
		o.Name = p
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := dump(t, f, o)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sf, _ := os.Open(sorted)
		o.Name = sorted
		want, _, err := dump(t, sf, o)
		sf.Close()
		if err != nil {
			t.Fatal(err)
		}
		// paje_sort also rewrites "" as "x" for pj_dump's sake.
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], ", x,", ", ,")
		}
		w := map[string]int{}
		for _, l := range want {
			w[l]++
		}
		differ := 0
		for _, l := range got {
			if w[l] > 0 {
				w[l]--
				continue
			}
			differ++
			if !strings.HasPrefix(l, "Variable, ") {
				t.Errorf("%s: record not in the sorted trace's output: %s", p, l)
			}
		}
		if differ > len(want)/1000 {
			t.Errorf("%s: %d of %d records differ from the sorted trace's", p, differ, len(want))
		}
		t.Logf("%s: %d lines, %d late samples reordered, %d held at most, %d variable pieces differ", p, st.Lines, st.Late, st.MaxBuffered, differ)
	}
}
