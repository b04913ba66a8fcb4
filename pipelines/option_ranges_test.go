package pipelines

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCheckOptionRanges: validate refuses what the commands refuse, naming
// the key: the stages' and the parser's options are checked by the same
// Validate the command line goes through.
func TestCheckOptionRanges(t *testing.T) {
	src := "version: 1\nsources:\n  a: {type: gen, parser: {type: paje%s}}\nstages:\n  s: {type: %s, inputs: [a]%s}\nsinks:\n  o: {type: capture, inputs: [s]}\n"
	for _, tc := range []struct {
		name                string
		parser, stage, opts string
		want                []string // "" entries: valid
	}{
		{"predict alpha 0", "", "predict", ", window: 10, alpha: 0", []string{"stages.s: alpha: 0: a significance level must be in (0, 1)"}},
		{"predict alpha 5", "", "predict", ", window: 10, alpha: 5", []string{"alpha: 5: a significance level must be in (0, 1)"}},
		{"predict alpha -1", "", "predict", ", window: 10, alpha: -1", []string{"alpha: -1: a significance level must be in (0, 1)"}},
		{"predict alpha NaN", "", "predict", ", window: 10, alpha: .nan", []string{"alpha: NaN: a significance level must be in (0, 1)"}},
		{"predict idle_threshold", "", "predict", ", window: 10, idle_threshold: 7", []string{"idle_threshold: 7: a likelihood must be in [0, 1]"}},
		{"predict regime_misses", "", "predict", ", window: 10, regime_misses: -4", []string{"regime_misses: -4: must be positive (0: no regime-change alert)"}},
		{"predict period", "", "predict", ", window: 10, period: -1", []string{"period: -1: must be positive (0: automatic)"}},
		{"predict min_period", "", "predict", ", window: 10, min_period: -1ms", []string{"min_period: -1ms: must be positive (0: no floor)"}},
		{"signal period", "", "signal", ", period: -1ms", []string{"stages.s: period: -1ms: must be positive (0: automatic)"}},
		{"signal min_period", "", "signal", ", min_period: -5", []string{"min_period: -5: must be positive (0: no floor)"}},
		{"forecast regime_alpha NaN", "", "forecast", ", horizons: [1s], regime_alpha: .nan", []string{"regime alpha NaN: must be in [0, 1)"}},
		{"paje threads", ", threads: 100000", "signal", "", []string{"sources.a.parser: threads: 100000 is more than 1024"}},
		{"paje reorder_horizon -5", ", reorder_horizon: -5", "signal", "", []string{"reorder_horizon: -5: must be positive, 0 (none, as pj_dump) or -1 (the default, 3 s)"}},
		{"paje reorder_horizon -1s", ", reorder_horizon: -1s", "signal", "", []string{"reorder_horizon: -1s: must be positive"}},
		// Valid: -1 is the documented default (3 s), 0 the automatic
		// period, 1024 threads.
		{"valid", ", reorder_horizon: -1, threads: 1024", "predict", ", window: 10, period: 0, alpha: 0.01, idle_threshold: 1, regime_misses: 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(fmtYAML(src, tc.parser, tc.stage, tc.opts)), "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = Check(testRegistry(newStore()), cfg)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid options refused: %v", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *ConfigError", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func fmtYAML(format string, args ...any) string {
	return fmt.Sprintf(format, args...)
}
