package starpudir

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/starpudirtest"
)

// The fixtures are a sampling directory StarPU 1.3.10 (Debian
// starpu-examples) wrote on a host named vm: the mlr example with
// STARPU_CALIBRATE=1 (tmp/mlr_*.out, 45/mlr_*.vm), and cholesky_implicit
// with dmda at four sizes (45/chol_model_*.vm: histories of 4 footprints).
const fixtures = "testdata/codelets"

func TestOpenFixtures(t *testing.T) {
	d, err := Open(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Raw) != 2 || len(d.Models) != 5 || len(d.Skipped) != 0 {
		t.Fatalf("raw %d models %d skipped %+v", len(d.Raw), len(d.Models), d.Skipped)
	}
	r := d.RawOf("mlr_final")
	if r == nil || !slices.Equal(r.Params, []string{"M", "N", "K"}) || len(r.Duration) != 420 || r.Lines[0] != 2 || r.Lines[419] != 421 {
		t.Fatalf("raw %+v", r)
	}
	if r.X[0][0] < 1 || r.X[0][0] > 10 || r.Duration[0] <= 0 {
		t.Errorf("first row %v %v", r.Duration[0], r.X[0])
	}
	ms := d.ModelsOf("mlr_final")
	if len(ms) != 1 || ms[0].Host != "vm" || len(ms[0].PerArch) != 1 {
		t.Fatalf("mlr_final models %+v", ms)
	}
	pa := ms[0].PerArch[0]
	if pa.Arch != "cpu0_impl0" || !slices.Equal(pa.Monomials, []string{"M^2*N", "N^3*K"}) || len(pa.Coeff) != 3 || pa.CoeffLine != 37 ||
		!slices.Equal(pa.Devices, []Device{{Type: 0, ID: 0, NCores: 1}}) || len(pa.Entries) != 0 || !math.IsNaN(pa.A) || !math.IsNaN(pa.Linear.Alpha) {
		t.Errorf("mlr_final %+v", pa)
	}
	init := d.ModelsOf("mlr_init")[0].PerArch[0]
	if len(init.Coeff) != 1 || !math.IsNaN(init.Coeff[0]) || init.Monomials != nil {
		t.Errorf("mlr_init: coefficients %v monomials %v", init.Coeff, init.Monomials)
	}
	chol := d.ModelsOf("chol_model_22")[0].PerArch[0]
	if len(chol.Entries) != 4 || chol.Coeff != nil {
		t.Fatalf("chol_model_22 %+v", chol)
	}
	for _, e := range chol.Entries {
		if e.Size == 0 || !(e.Mean > 0) || e.N < 1 || e.Flops <= 0 || e.Line == 0 {
			t.Errorf("entry %+v", e)
		}
	}
}

func TestCodelets(t *testing.T) {
	home, codelets := starpudirtest.Home(t)
	for _, dir := range []string{home, filepath.Join(home, ".starpu"), filepath.Join(home, ".starpu", "sampling"), codelets} {
		got, err := Codelets(dir)
		if err != nil || got != codelets {
			t.Errorf("%s: %q %v, want %s", dir, got, err, codelets)
		}
	}
	empty := t.TempDir()
	if _, err := Codelets(empty); err == nil || !strings.Contains(err.Error(), "no StarPU sampling directory") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := Open(filepath.Join(empty, "nope")); err == nil {
		t.Error("a missing directory opened")
	}
}

func TestParseRawErrors(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"empty", "", "f.out:1: not a StarPU raw measurement file"},
		{"foreign header", "time,n\n1,2\n", "f.out:1: not a StarPU raw measurement file"},
		{"no parameters", "Duration\n1\n", "f.out:1: not a StarPU raw"},
		{"repeated name", "Duration, M, M\n1, 2, 3", "f.out:1: parameter 2"},
		{"bad name", "Duration, M^2\n1, 2", "f.out:1: parameter 1"},
		{"header only", "Duration, M, N, K", "f.out: no measurements"},
		{"short row", "Duration, M, N\n1.0, 2.0, 3.0\n1.0, 2.0", "f.out:3: 2 fields, want 3"},
		{"long row", "Duration, M\n1.0, 2.0, 3.0", "f.out:2: 3 fields, want 2"},
		{"not a number", "Duration, M\n1.0, x", "f.out:2: M: \"x\" is not a finite number"},
		{"hexadecimal", "Duration, M\n1.0, 0x10", "f.out:2: M: \"0x10\""},
		{"infinite", "Duration, M\ninf, 1", "f.out:2: Duration: \"inf\""},
		{"negative duration", "Duration, M\n-1.0, 1", "f.out:2: Duration -1 is negative"},
		{"binary", "Duration, M\n1.0, 2\x00", "f.out:2: binary data"},
	} {
		_, err := ParseRaw("f.out", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	// As StarPU writes it (no final newline), with one, with CRLF, and
	// with a blank line where a run was appended to an interrupted one.
	for _, in := range []string{"Duration, M, N\n1.5, 2.0, 3.0\n2.5, 4.0, 6.0", "Duration, M, N\n1.5, 2.0, 3.0\n2.5, 4.0, 6.0\n",
		"Duration, M, N\r\n1.5, 2.0, 3.0\r\n2.5, 4.0, 6.0\r\n", "Duration, M, N\n1.5, 2.0, 3.0\n\n2.5, 4.0, 6.0"} {
		r, err := ParseRaw("x/k.out", []byte(in))
		if err != nil || r.Symbol != "k" || !slices.Equal(r.Duration, []float64{1.5, 2.5}) || !slices.Equal(r.X[1], []float64{4, 6}) {
			t.Errorf("%q: %+v %v", in, r, err)
		}
	}
}

// model is a model file as StarPU writes it, of one CPU arch, with its
// multiple-regression and history parts given.
func model(mlr, history string) string {
	return "##################\n# Performance Model Version\n45\n\n####################\n# COMBs\n# number of combinations\n1\n" +
		"####################\n# COMB_0\n# number of types devices\n1\n####################\n# DEV_0\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)\n0\n" +
		"####################\n# DEV_0\n# device id \n0\n####################\n# DEV_0\n# number of cores \n1\n##########\n# number of implementations\n1\n" +
		"#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n" + history +
		"# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan            \t0\t0              \t0              \n" +
		"# a\t\tb\t\tc\nnan            \tnan            \tnan            \n" + mlr
}

const mlrPart = "# n\tintercept\tM^2*N\t\tN^3*K\t\t\n3\t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \n\n"

func TestParseModelErrors(t *testing.T) {
	good := model(mlrPart, "0\n")
	if _, err := ParseModel("45/k.vm", []byte(good)); err != nil {
		t.Fatalf("the well-formed model: %v", err)
	}
	hist := model("# not multiple-regression-base\n0\n# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n", "2\n")
	for _, c := range []struct{ name, in, err string }{
		{"empty", "", "45/k.vm: empty file"},
		{"foreign", "<?xml version=\"1.0\"?>\n", "45/k.vm:1: the performance model version: 2 fields"},
		{"old version", strings.Replace(good, "\n45\n", "\n44\n", 1), "45/k.vm:3: performance model version 44"},
		{"truncated", good[:strings.Index(good, "# a\t")], "end of file: want the non-linear regression"},
		{"device type", strings.Replace(good, "MPI_MS - 5)\n0\n", "MPI_MS - 5)\n4\n", 1), "45/k.vm:16: device type 4"},
		{"negative count", strings.Replace(good, "# number of combinations\n1\n", "# number of combinations\n-1\n", 1), "45/k.vm:8: the number of combinations"},
		{"coefficient count", strings.Replace(good, "\n3\t0.0", "\n4\t0.0", 1), "45/k.vm:37: multiple regression: 3 coefficients after the count 4"},
		{"coefficient", strings.Replace(good, "\n3\t0.000000e+00", "\n3\tzero", 1), "45/k.vm:37: multiple regression: coefficient \"zero\""},
		{"linear regression", strings.Replace(good, "\tnan            \tnan            \t0\t", "\tnan            \t0\t", 1), "45/k.vm:33: the linear regression"},
		{"history entry", strings.Replace(hist, "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n",
			"# hash\n3e921964\t65536\t7.0e+05\t3.1e+02\t2.0e+00\t9.4e+02\t2.9e+05\t3\nzz\t1\t1\t1\t1\t1\t1\t1\n", 1), "45/k.vm:40: history entry: footprint \"zz\""},
		{"negative mean", strings.Replace(hist, "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n",
			"3e921964\t65536\t7.0e+05\t-3.1e+02\t2.0e+00\t9.4e+02\t2.9e+05\t3\n", 1), "history entry: mean \"-3.1e+02\""},
		{"missing entries", hist, "end of file: want a history entry"},
		{"trailing", good + "garbage\n", "45/k.vm:39: \"garbage\" after the last model"},
		{"binary", good[:40] + "\x00" + good[41:], "45/k.vm:2: binary data"},
	} {
		_, err := ParseModel("45/k.vm", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	// An entry without flops (older files) and glibc's -nan are read.
	old := strings.Replace(hist, "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n",
		"3e921964\t65536\t3.1e+02\t2.0e+00\t9.4e+02\t2.9e+05\t3\n880805ba\t49152\t-nan\t4.2e+02\t0\t4.2e+02\t1.8e+05\t1\n", 1)
	m, err := ParseModel("45/k.vm", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	es := m.PerArch[0].Entries
	if len(es) != 2 || es[0].Footprint != 0x3e921964 || es[0].Size != 65536 || es[0].Flops != 0 || es[0].Mean != 310 || es[0].N != 3 || !math.IsNaN(es[1].Flops) {
		t.Errorf("entries %+v", es)
	}
}

func TestSetCoefficients(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "45", "mlr_final.vm"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModel("mlr_final.vm", data)
	if err != nil {
		t.Fatal(err)
	}
	pa := m.PerArch[0]
	want := []float64{0.45785793146432807, -7.831258694767351e-05, 0.0004348242361503968}
	if err := m.SetCoefficients(pa, want[:2]); err == nil {
		t.Error("two coefficients for three accepted")
	}
	if err := m.SetCoefficients(pa, []float64{1, math.NaN(), 2}); err == nil {
		t.Error("NaN accepted")
	}
	if err := m.SetCoefficients(pa, want); err != nil {
		t.Fatal(err)
	}
	out := m.Bytes()
	back, err := ParseModel("mlr_final.vm", out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.PerArch[0].Coeff, want) {
		t.Errorf("read back %v, want %v (exactly)", back.PerArch[0].Coeff, want)
	}
	// Only the coefficient line changed.
	a, b := strings.Split(string(data), "\n"), strings.Split(string(out), "\n")
	if len(a) != len(b) {
		t.Fatalf("%d lines, then %d", len(a), len(b))
	}
	for i := range a {
		if (a[i] != b[i]) != (i == pa.CoeffLine-1) {
			t.Errorf("line %d: %q then %q", i+1, a[i], b[i])
		}
	}
	if !strings.HasPrefix(b[pa.CoeffLine-1], "3\t4.5785793146432807e-01\t") {
		t.Errorf("line %q", b[pa.CoeffLine-1])
	}
}

func TestWriteModel(t *testing.T) {
	_, codelets := starpudirtest.Home(t)
	path := filepath.Join(codelets, "45", "mlr_final.vm")
	orig, _ := os.ReadFile(path)
	var backups []string
	for k, c := range []float64{1.5, 2.5} {
		m, err := ReadModel(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetCoefficients(m.PerArch[0], []float64{c, 2, 3}); err != nil {
			t.Fatal(err)
		}
		b, err := WriteModel(m)
		if err != nil {
			t.Fatal(err)
		}
		backups = append(backups, b)
		if back, err := ReadModel(path); err != nil || back.PerArch[0].Coeff[0] != c {
			t.Fatalf("write %d: %v %v", k, back, err)
		}
	}
	if !slices.Equal(backups, []string{path + ".bak", path + ".bak.1"}) {
		t.Errorf("backups %v", backups)
	}
	if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, orig) {
		t.Error("the first backup is not the original file")
	}
	// The backups are reported, not read, and not errors.
	d, err := Open(codelets)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Models) != 5 || len(d.Skipped) != 2 || d.Backups() != 2 {
		t.Errorf("models %d skipped %+v", len(d.Models), d.Skipped)
	}
	// No temporary file is left.
	ents, _ := os.ReadDir(filepath.Join(codelets, "45"))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s", e.Name())
		}
	}
}

// TestOpenSkipsDamaged: a damaged or foreign file is reported with its
// path and the reason, and the others are read.
func TestOpenSkipsDamaged(t *testing.T) {
	home, codelets := starpudirtest.Home(t)
	write := func(rel, content string) string {
		p := filepath.Join(codelets, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, _ := os.ReadFile(filepath.Join(codelets, "45", "chol_model_11.vm"))
	truncated := write("45/chol_model_11.vm", string(good[:len(good)/2]))
	foreign := write("45/README", "these are my models\n")
	badOut := write("tmp/other.out", "time, n\n1, 2\n")
	notOut := write("tmp/notes.txt", "x")
	old := write("44/mlr_final.vm", "44\n")
	empty := write("45/empty.vm", "")
	tmp := write("45/mlr_final.vm.tmp", "45\n")
	d, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Raw) != 2 || len(d.Models) != 4 {
		t.Errorf("raw %d models %d: the others are read", len(d.Raw), len(d.Models))
	}
	want := map[string]string{
		truncated:         "line ",
		foreign:           "line 1: the performance model version",
		badOut:            "line 1: not a StarPU raw measurement file",
		notOut:            "not a raw measurement file",
		filepath.Dir(old): "version 44",
		empty:             "empty file",
		tmp:               "a temporary file",
	}
	for _, s := range d.Skipped {
		w, ok := want[s.Path]
		if !ok || !strings.Contains(s.Reason, w) {
			t.Errorf("skipped %s: %q (want %q)", s.Path, s.Reason, w)
		}
		delete(want, s.Path)
	}
	for p := range want {
		t.Errorf("%s not reported", p)
	}
}

func TestExponents(t *testing.T) {
	params := []string{"M", "N", "K"}
	for _, c := range []struct {
		in  string
		exp []int
		err string
	}{
		{"M^2*N", []int{2, 1, 0}, ""},
		{"N^3*K", []int{0, 3, 1}, ""},
		{"K", []int{0, 0, 1}, ""},
		{"N*N", []int{0, 2, 0}, ""},
		{"c1", nil, "not a parameter"},
		{"M^0", nil, "power"},
		{"M^-1", nil, "power"},
		{"M^0.5", nil, "power"},
		{"log2(M)", nil, "not a parameter"},
	} {
		exp, err := Exponents(c.in, params)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(exp, c.exp) {
			t.Errorf("%s: %v %v", c.in, exp, err)
		}
		if name := Monomial(exp, params); c.in != "N*N" && name != c.in {
			t.Errorf("%v: %q, want %q", exp, name, c.in)
		}
	}
}

// FuzzParseModel: no panic; a file that is read is written back
// unchanged, and with its coefficients set to finite values reads back
// with them.
func FuzzParseModel(f *testing.F) {
	for _, name := range []string{"mlr_final.vm", "mlr_init.vm", "chol_model_22.vm"} {
		data, err := os.ReadFile(filepath.Join(fixtures, "45", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(model(mlrPart, "0\n")))
	f.Add([]byte("45\n0\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseModel("45/k.vm", in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "45/k.vm") {
				t.Fatalf("error without the path: %v", err)
			}
			return
		}
		if !bytes.Equal(m.Bytes(), in) {
			t.Fatal("not written back unchanged")
		}
		for _, pa := range m.PerArch {
			if len(pa.Coeff) == 0 {
				continue
			}
			c := make([]float64, len(pa.Coeff))
			for i := range c {
				c[i] = float64(i) + 0.25
			}
			if err := m.SetCoefficients(pa, c); err != nil {
				t.Fatal(err)
			}
			back, err := ParseModel("45/k.vm", m.Bytes())
			if err != nil {
				t.Fatalf("with coefficients set: %v", err)
			}
			for _, bp := range back.PerArch {
				if bp.Comb == pa.Comb && bp.Impl == pa.Impl && !slices.Equal(bp.Coeff, c) {
					t.Fatalf("coefficients %v, want %v", bp.Coeff, c)
				}
			}
		}
	})
}

// FuzzParseRaw: no panic; what is read has as many values per row as
// names, all finite, and errors name the file.
func FuzzParseRaw(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(fixtures, "tmp", "mlr_final.out"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:400])
	f.Add([]byte("Duration, M\n1.0, 2.0\n"))
	f.Add([]byte("Duration, P0, P1\n1, 2, 3\n\n4, 5, 6"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseRaw("tmp/k.out", in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tmp/k.out") {
				t.Fatalf("error without the path: %v", err)
			}
			return
		}
		if len(r.Duration) == 0 || len(r.X) != len(r.Duration) || len(r.Lines) != len(r.Duration) {
			t.Fatal("rows do not match")
		}
		for i, row := range r.X {
			if len(row) != len(r.Params) || r.Duration[i] < 0 || math.IsInf(r.Duration[i], 0) {
				t.Fatalf("row %d: %v %v", i, r.Duration[i], row)
			}
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("row %d: %v", i, row)
				}
			}
		}
	})
}
