package modelio

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadFiles feeds arbitrary bytes to every reader of the model
// commands' input files (power samples, Pareto points, per-state powers,
// power and completion-time models, task tables and task models): no
// panic, and what is accepted holds only finite numbers in range.
func FuzzReadFiles(f *testing.F) {
	f.Add([]byte("cpu,f,watts\n0,1.86,55.75\n100,2.79,149.72\n"))
	f.Add([]byte("config,time,power\na,10,100\n\"b,c\",8,120\n"))
	f.Add([]byte("idle: 91.6\napp: 125.2\n"))
	f.Add([]byte(`{"model":"dvfs-power/seed001","fmax":2.79,"p_idle_fmax":56.28,"A":125.82,"B":-32.38,"alpha":1.59}`))
	f.Add([]byte("n,m,t\n1,2,3\n2,4,5\n"))
	f.Add([]byte(`{"id":"r/1","run":"r","codelet":"GEMM","worker":"CPU0","worker_kind":"CPU","duration_s":0.1,"params":{"Size":4}}` + "\n"))
	f.Add([]byte("Duration, M, N, K\n1.302000, 8.000000, 8.000000, 2.000000\n1.132000, 8.000000, 8.000000, 2.000000"))
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		for _, name := range []string{"f.csv", "f.json", "f.jsonl", "f.out"} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, in, 0o644); err != nil {
				t.Fatal(err)
			}
			if ss, err := ReadPowerSamples(path); err == nil {
				for _, s := range ss {
					if !(s.CPU >= 0 && s.CPU <= 1 && s.F > 0 && s.Watts > 0) || math.IsInf(s.F+s.Watts, 0) {
						t.Fatalf("power sample %+v", s)
					}
				}
			}
			if ps, err := ReadPoints(path); err == nil {
				for _, p := range ps {
					if !(p.Time > 0 && p.Power > 0) || math.IsInf(p.Time+p.Power, 0) {
						t.Fatalf("point %+v", p)
					}
				}
			}
			if p, err := ReadStatePowers(path); err == nil {
				if p.Validate() != nil {
					t.Fatalf("state powers %+v", p)
				}
			}
			_, _ = ReadPowerModel(path)
			_, _ = ReadCTModel(path)
			_, _ = ReadTaskTable(path)
			_, _ = ReadTaskModel(path)
		}
	})
}
