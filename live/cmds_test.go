package live

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tracecast/tracecast/internal/cliflags"
)

// TestTopicsCommandUsage: a subcommand other than list and create is a
// usage error naming it, before any broker is asked.
func TestTopicsCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"delete"}, {"list", "x"}} {
		err := TopicsCommand(context.Background(), TopicsOptions{Brokers: []string{"127.0.0.1:1"}}, args, io.Discard)
		var ue cliflags.UsageError
		if !errors.As(err, &ue) || err.Error() != `unknown subcommand "`+args[0]+`": list or create` {
			t.Errorf("%q: %v", args, err)
		}
	}
}
