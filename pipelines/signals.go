package pipelines

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/rs/zerolog"
)

// WithSignals wires SIGINT and SIGTERM to Run's two stops: the first signal
// cancels the returned context (a graceful stop: pass it to Run); a second
// SIGINT (a person pressing Ctrl-C again) closes hard (a hard stop: pass it
// as RunOptions.HardStop). Repeated SIGTERMs do not: `timeout`, systemd and
// container runtimes send SIGTERM more than once, and the graceful stop
// (bounded by settings.shutdown_timeout) must still flush, commit and exit
// 0. stop releases the signal handler; call it when Run returns.
func WithSignals(parent context.Context, log zerolog.Logger) (ctx context.Context, hard <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	hardCh := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				n++
				if n == 1 {
					log.Info().Str("signal", sig.String()).Msg("stopping gracefully; Ctrl-C again to stop at once")
					cancel()
					continue
				}
				if sig == syscall.SIGTERM {
					log.Info().Str("signal", sig.String()).Msg("already stopping gracefully")
					continue
				}
				log.Warn().Str("signal", sig.String()).Msg("second interrupt: stopping at once")
				close(hardCh)
				return
			}
		}
	})
	var once sync.Once
	return ctx, hardCh, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			wg.Wait()
			cancel()
		})
	}
}
