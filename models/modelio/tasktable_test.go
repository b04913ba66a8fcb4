package modelio

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadTaskTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, file, data string
		params           []string
		num              map[string][]float64 // NaN: missing
		text             map[string][]string
		notNumeric       map[string]string
		err              string
	}{
		{name: "lwperf csv", file: "m.csv", data: "# lwperf\napp,n,t\nk,1,2.5\nk,,3\nj,3,x\n",
			num: map[string][]float64{"n": {1, math.NaN(), 3}}, text: map[string][]string{"app": {"k", "k", "j"}},
			notNumeric: map[string]string{"t": "m.csv:5: column t: \"x\" is not a number"}},
		{name: "tasks csv", file: "t.csv", data: "id,run,codelet,worker,worker_kind,job_id,footprint,start_s,duration_s,energy_j,predicted_duration_s,predicted_energy_j,Size,h0_nx,GFlop\n" +
			"r/1,r,GEMM,CPU0,CPU,1,ab,0.1,0.01,,,,691200,240,0.02\n",
			params: []string{"Size", "h0_nx", "GFlop"}, num: map[string][]float64{"job_id": {1}, "energy_j": {math.NaN()}}},
		{name: "tasks jsonl", file: "t.jsonl", data: `{"id":"r/1","codelet":"GEMM","job_id":"1","duration_s":0.01,"energy_j":null,"params":{"Size":1,"X":2}}` + "\n\n" +
			`{"id":"r/2","codelet":"TRSM","job_id":"2","duration_s":0.02,"energy_j":0.5,"params":{"Size":3,"h1_nx":4}}` + "\n",
			params: []string{"Size", "h1_nx", "X"}, num: map[string][]float64{"X": {2, math.NaN()}, "energy_j": {math.NaN(), 0.5}},
			text: map[string][]string{"codelet": {"GEMM", "TRSM"}, "X": {"2", ""}}},
		{name: "bad json", file: "b.jsonl", data: "{\"a\":1}\n[1,2]\n", err: "b.jsonl:2: not a JSON object"},
		{name: "nested", file: "n.jsonl", data: "{\"a\":{\"b\":1}}\n", err: "n.jsonl:1: a: nested objects"},
		{name: "ragged", file: "r.csv", data: "a,b\n1,2\n3\n", err: "r.csv:3:"},
		{name: "repeated column", file: "h.csv", data: "a,a\n1,2\n", err: "h.csv:1: column 2"},
		{name: "empty", file: "e.csv", data: "a,b\n", err: "e.csv: no rows"},
		{name: "unknown format", file: "x.txt", data: "a\n", err: "unknown table format"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := write(c.file, c.data)
			tt, err := ReadTaskTable(path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tt.Params, c.params) {
				t.Errorf("params %v, want %v", tt.Params, c.params)
			}
			for col, want := range c.num {
				got, ok := tt.Num[col]
				if !ok || len(got) != len(want) {
					t.Fatalf("%s: %v, want %v", col, got, want)
				}
				for i := range want {
					if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Errorf("%s[%d] = %v, want %v", col, i, got[i], want[i])
					}
				}
			}
			for col, want := range c.text {
				if !slices.Equal(tt.Text[col], want) {
					t.Errorf("%s: %q, want %q", col, tt.Text[col], want)
				}
			}
			for col, want := range c.notNumeric {
				if _, ok := tt.Num[col]; ok || !strings.HasSuffix(tt.NotNumeric[col], want) {
					t.Errorf("%s: %q, want …%q", col, tt.NotNumeric[col], want)
				}
			}
		})
	}
}
