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
// cancels the returned context (a graceful stop: pass it to Run), the second
// closes hard (a hard stop: pass it as RunOptions.HardStop). stop releases
// the signal handler; call it when Run returns.
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
					log.Info().Str("signal", sig.String()).Msg("stopping gracefully; send it again to stop at once")
					cancel()
					continue
				}
				log.Warn().Str("signal", sig.String()).Msg("second signal: stopping at once")
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
