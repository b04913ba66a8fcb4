//go:build linux

package main

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestSoak runs the soak for SOAK (default 1m: the version make test
// runs; make soak runs the command for 30 minutes) and fails unless every
// criterion holds. SOAK_OUT keeps soak.csv and soak.svg.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the live service with a broker for a minute or more (-short)")
	}
	d, err := time.ParseDuration(cmp.Or(os.Getenv("SOAK"), "1m"))
	if err != nil {
		t.Fatalf("SOAK: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tracecast")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/tracecast").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := cmp.Or(os.Getenv("SOAK_OUT"), filepath.Join(dir, "out"))
	cfg := config{binary: bin, dir: filepath.Join(dir, "work"), out: out, duration: d, gap: 500 * time.Millisecond, streams: 4, speed: "realtime",
		realTrace: "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", realEvery: 10,
		log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	res, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + res.summary())
	if !res.passed() {
		for _, l := range []string{"pipeline", "broker"} {
			b, _ := os.ReadFile(filepath.Join(cfg.dir, l+".log"))
			t.Logf("%s's log (last 4000 bytes):\n%s", l, b[max(0, len(b)-4000):])
		}
		t.Fatal("the soak failed its criteria")
	}
	for _, f := range []string{"soak.csv", "soak.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
