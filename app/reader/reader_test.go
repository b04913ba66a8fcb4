package reader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
)

// The registry holds what the states command uses, and nothing that would
// link the other commands' packages.
func TestRegistry(t *testing.T) {
	r := Registry()
	for kind, want := range map[component.Kind][]string{
		component.KindSource: {"file"},
		component.KindParser: {"paje"},
		component.KindSink:   {"csv", "jsonl", "pjdump"},
		component.KindStage:  nil,
	} {
		got := r.Types(kind)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s types %q, want %q", kind, got, want)
		}
	}
}

// States with this package's registry alone: the records, the parser's
// statistics, and a bad format as an *OptionError.
func TestStates(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ring.jsonl")
	o := States{Trace: "../../testdata/smpi/ring-4.trace", Format: "jsonl", Out: out, Parser: paje.DefaultParserConfig()}
	stats, err := Runner{Log: zerolog.Nop()}.States(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n == 0 || int64(n) != stats.Entities {
		t.Errorf("%d records written, the parser resolved %d entities", n, stats.Entities)
	}
	o.Format = "bogus"
	_, err = Runner{Log: zerolog.Nop()}.States(context.Background(), o)
	if oe, ok := err.(*OptionError); !ok || !strings.Contains(oe.Error(), `unknown --format "bogus"`) {
		t.Errorf("--format bogus: %v", err)
	}
}
