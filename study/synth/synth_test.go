package synth

import (
	"bytes"
	"strings"
	"testing"
)

func TestDAGPropertiesSpanTableI(t *testing.T) {
	for _, tasks := range []int{1000, 1600, 2200, 2800, 3400, 4000} {
		for seed := uint64(1); seed <= 4; seed++ {
			d, err := NewDAG(DAGParams{Tasks: tasks, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			p := d.Props()
			if p.Tasks != tasks {
				t.Errorf("tasks %d", p.Tasks)
			}
			if p.EdgeRatio < 1.7 || p.EdgeRatio > 2.0 {
				t.Errorf("T=%d seed %d: edge ratio %.3f", tasks, seed, p.EdgeRatio)
			}
			if p.MaxOutDegree < 7 || p.MaxOutDegree > 18 || p.MaxOutDegree != d.Params.MaxOutDegree {
				t.Errorf("T=%d seed %d: max out-degree %d (asked %d)", tasks, seed, p.MaxOutDegree, d.Params.MaxOutDegree)
			}
			if p.Level < 26 || p.Level > 132 || p.Level != d.Params.Levels {
				t.Errorf("T=%d seed %d: level %d (asked %d)", tasks, seed, p.Level, d.Params.Levels)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	gen := func(seed uint64) []byte {
		d, err := NewDAG(DAGParams{Tasks: 1000, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := d.WriteDOT(&b, "g"); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteTrace(&b, d, TraceParams{Workers: 16, Seed: seed, TransferProb: 0.3, TransferMeanMS: 1}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b, c := gen(7), gen(7), gen(8)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed, different output")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same output")
	}
}

func TestParseCodelets(t *testing.T) {
	cs, err := ParseCodelets("GEMM:22:0.2:3,TRSM:10")
	if err != nil || len(cs) != 2 || cs[0].Weight != 3 || cs[1].CV != 0.3 {
		t.Fatalf("%v %+v", err, cs)
	}
	cs, err = ParseCodelets("GEMM:4:0.1:1:64/128:2.5,TRSM:2:0:1:32")
	if err != nil || len(cs) != 2 || len(cs[0].Sizes) != 2 || cs[0].SizeExp != 2.5 || cs[1].Sizes[0] != 32 || cs[1].SizeExp != 3 {
		t.Fatalf("%v %+v", err, cs)
	}
	for _, bad := range []string{"", "X", "X:-1", "X:1:2:3:4:5:6", "X:1:2:3:0", "X:1:2:3:4/x", "X:1:2:3:4:e", "a b:1"} {
		if _, err := ParseCodelets(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSizedCodelets: tasks of a codelet with tile sizes say their size
// (Size, Params, GFlop) and last MEAN·(N/N1)^EXP on average.
func TestSizedCodelets(t *testing.T) {
	d, err := NewDAG(DAGParams{Tasks: 1000, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	cs := []Codelet{{Name: "GEMM", MeanMS: 1, CV: 0, Weight: 1, Sizes: []int{100, 200}, SizeExp: 3}}
	if _, err := WriteTrace(&b, d, TraceParams{Workers: 4, Seed: 4, Codelets: cs}); err != nil {
		t.Fatal(err)
	}
	n := map[int]int{}
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Split(line, "\t")
		if f[0] != "20" {
			continue
		}
		switch f[5] {
		case "120000":
			n[100]++
			if f[6] != `"M100x100x4_M100x100x4_M100x100x4"` || f[12] != "0.002000" {
				t.Fatalf("line %q", line)
			}
		case "480000":
			n[200]++
			if f[6] != `"M200x200x4_M200x200x4_M200x200x4"` || f[12] != "0.016000" {
				t.Fatalf("line %q", line)
			}
		default:
			t.Fatalf("line %q", line)
		}
	}
	if n[100] < 400 || n[200] < 400 || n[100]+n[200] != 1000 {
		t.Errorf("sizes %v", n)
	}
}

func TestSmallDAG(t *testing.T) {
	d, err := NewDAG(DAGParams{Tasks: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Props(); p.Tasks != 10 || p.Level != 5 {
		t.Fatalf("%+v", p)
	}
	var b bytes.Buffer
	if _, err := WriteTrace(&b, d, TraceParams{Workers: 3, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDAG(DAGParams{Tasks: 10, Levels: 20}); err == nil {
		t.Fatal("20 levels of 10 tasks accepted")
	}
}
