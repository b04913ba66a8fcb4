package pipelines

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// SIGTERM twice (timeout, container runtimes) is still a graceful stop; a
// second SIGINT is the hard one.
func TestSignals(t *testing.T) {
	for _, tc := range []struct {
		second os.Signal
		hard   bool
	}{{syscall.SIGTERM, false}, {os.Interrupt, true}} {
		ctx, hard, stop := WithSignals(t.Context(), zerolog.Nop())
		for _, sig := range []os.Signal{syscall.SIGTERM, tc.second} {
			if err := syscall.Kill(os.Getpid(), sig.(syscall.Signal)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("first SIGTERM: no graceful stop")
		}
		select {
		case <-hard:
			if !tc.hard {
				t.Fatalf("SIGTERM then %v: a hard stop", tc.second)
			}
		case <-time.After(300 * time.Millisecond):
			if tc.hard {
				t.Fatalf("SIGTERM then %v: no hard stop", tc.second)
			}
		}
		stop()
	}
}
