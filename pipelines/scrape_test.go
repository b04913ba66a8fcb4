package pipelines

import (
	"context"
	"github.com/tracecast/tracecast/internal/promexport"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// sample is one series of a Prometheus text scrape.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrapeOf is one scrape, series in the order served.
type scrapeOf []sample

// parseScrape reads the Prometheus text format (comments skipped).
func parseScrape(t testing.TB, body string) scrapeOf {
	t.Helper()
	var out scrapeOf
	for line := range strings.SplitSeq(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			s.name, rest = line[:i], line[i+1:]
			for rest[0] != '}' {
				eq := strings.IndexByte(rest, '=')
				name := rest[:eq]
				rest = rest[eq+2:] // ="
				var v strings.Builder
				for rest[0] != '"' {
					if rest[0] == '\\' {
						rest = rest[1:]
						if rest[0] == 'n' {
							v.WriteByte('\n')
							rest = rest[1:]
							continue
						}
					}
					v.WriteByte(rest[0])
					rest = rest[1:]
				}
				s.labels[name] = v.String()
				rest = strings.TrimPrefix(rest[1:], ",")
			}
			rest = strings.TrimSpace(rest[1:])
		} else {
			s.name, rest, _ = strings.Cut(line, " ")
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// match reports whether s is named name and has the label pairs kv.
func (s *sample) match(name string, kv ...string) bool {
	if s.name != name {
		return false
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if s.labels[kv[i]] != kv[i+1] {
			return false
		}
	}
	return true
}

// get returns the value of the one series named name with the label pairs
// kv, and whether there is one; several fail the test.
func (sc scrapeOf) get(t testing.TB, name string, kv ...string) (float64, bool) {
	t.Helper()
	var v float64
	n := 0
	for i := range sc {
		if sc[i].match(name, kv...) {
			v = sc[i].value
			n++
		}
	}
	if n > 1 {
		t.Fatalf("%d series %s %v", n, name, kv)
	}
	return v, n == 1
}

// all returns the series named name with the label pairs kv.
func (sc scrapeOf) all(name string, kv ...string) []sample {
	var out []sample
	for i := range sc {
		if sc[i].match(name, kv...) {
			out = append(out, sc[i])
		}
	}
	return out
}

// key names a series: name{label="value",...} with labels sorted as served.
func (s *sample) key() string {
	var b strings.Builder
	b.WriteString(s.name)
	for _, n := range slices.Sorted(maps.Keys(s.labels)) {
		b.WriteString(" " + n + "=" + strconv.Quote(s.labels[n]))
	}
	return b.String()
}

// metricsServer serves a fresh registry on a loopback port for a test
// (stopped at its end) and returns it, its health and a scrape function.
func metricsServer(t testing.TB) (*prometheus.Registry, *Health, func() scrapeOf) {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := &Health{}
	addr, stop, err := promexport.Serve("127.0.0.1:0", reg, h, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return reg, h, func() scrapeOf {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/metrics", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %s\n%s", resp.Status, b)
		}
		return parseScrape(t, string(b))
	}
}
