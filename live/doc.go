// Package live is the Kafka plumbing around tracecast's live pipelines: a
// development broker (franz-go's kfake), the replay of an archived trace
// into a topic the way a running application publishes its lines, and the
// subscriber side, which reads the records the live pipelines publish (JSON
// or Arrow messages) as a scheduler does. The commands broker, publish,
// subscribe and live are flags over it; Kafka gives them, and run, the
// flags (and TRACECAST_* variables) that say how to reach a cluster:
// --brokers for every kafka source and sink of a pipeline, TLS and SASL.
package live

import (
	"fmt"

	"github.com/tracecast/tracecast/internal/kafkaname"
)

// OptionError is a bad option value: its Error reads `option "value":
// reason` (`option: reason` for a missing value), so that a command can put
// its flag's dashes in front.
type OptionError struct {
	Option, Value string
	Err           error
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %v", e.Option, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Option, kafkaname.Quote(e.Value), e.Err) // at most ~60 bytes of the value
}
func (e *OptionError) Unwrap() error { return e.Err }
