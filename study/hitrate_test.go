package study

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
)

func TestHitrates(t *testing.T) {
	meta := map[string]string{"r": "4", "period": "0.5", "time_unit": "ms", "class": "idle"}
	// 40 samples: 20 with every worker idle, then 20 with none.
	var ss []tracecast.Sample
	for k := range 40 {
		x := int32(4)
		if k >= 20 {
			x = 0
		}
		ss = append(ss, tracecast.Sample{K: int64(k), X: x})
	}
	for _, tc := range []struct {
		name  string
		class string
		batch []tracecast.Sample
		want  []string // in the JSON lines
		err   string
		idle  bool
	}{
		{name: "idle", class: "idle", batch: ss, idle: true,
			want: []string{`"window":5,`, `"compared":7,`, `"hits":6,`, `"window_s":0.0025`, `"trace":"t"`, `"method":"matlab"`, `"r":4`}},
		{name: "compute", class: "compute", batch: ss, want: []string{`"class":"compute"`}},
		{name: "no samples", class: "idle", err: "t: the signal has no samples"},
	} {
		h := &Hitrates{Trace: "t", Windows: []int{5, 10}, Method: ks.Matlab, Alpha: 0.05}
		m := map[string]string{}
		for k, v := range meta {
			m[k] = v
		}
		m["class"] = tc.class
		if tc.batch != nil {
			h.Write(context.Background(), tracecast.Batch{Items: tc.batch[:10], Meta: m})
			h.Write(context.Background(), tracecast.Batch{Items: tc.batch[10:]})
		}
		h.Write(context.Background(), tracecast.Batch{Items: []tracecast.Entity{{}}}) // ignored
		var out bytes.Buffer
		err := h.WriteResults(&out, false)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if err != nil || len(lines) != 2 {
			t.Fatalf("%s: %v\n%s", tc.name, err, out.String())
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("%s: not JSON: %s", tc.name, l)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("%s: %s lacks %s", tc.name, lines[0], w)
			}
		}
		cl, ok := h.Classification()
		if ok != tc.idle || (ok && (cl.State != surface.Patch || cl.IdleFraction != 0.5)) {
			t.Errorf("%s: classification %+v %v", tc.name, cl, ok)
		}
		out.Reset()
		if err := h.WriteResults(&out, true); err != nil || !strings.HasPrefix(strings.TrimSpace(out.String()), "window") || strings.Count(out.String(), "\n") != 3 {
			t.Errorf("%s: table %v\n%s", tc.name, err, out.String())
		}
	}
}
