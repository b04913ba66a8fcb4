package forecast

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Query is "at least k containers in the class": k is a count, or a
// percentage of the R selected containers (k = ⌈pct·R⌉).
type Query struct {
	// Text is the query as given, without spaces: "idle>=25%".
	Text  string
	Class string
	// Percent is the percentage when the query gives one, else Count holds k.
	Percent float64
	IsPct   bool
	Count   int
}

var queryRE = regexp.MustCompile(`^\s*([a-z]+)\s*>=\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$`)

// ParseQuery reads CLASS>=COUNT or CLASS>=PERCENT% (idle>=25%, idle>=1).
// The class is checked by the caller (the signal's classes).
func ParseQuery(s string) (Query, error) {
	m := queryRE.FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return Query{}, fmt.Errorf("query %q: want CLASS>=COUNT or CLASS>=PERCENT%% (idle>=25%%, idle>=1)", s)
	}
	v, _ := strconv.ParseFloat(m[2], 64)
	q := Query{Text: strings.ReplaceAll(strings.TrimSpace(strings.ToLower(s)), " ", ""), Class: m[1]}
	if m[3] == "%" {
		if v > 100 {
			return Query{}, fmt.Errorf("query %q: more than 100%%", s)
		}
		q.Percent, q.IsPct = v, true
	} else {
		if v != math.Trunc(v) {
			return Query{}, fmt.Errorf("query %q: a count must be an integer", s)
		}
		// A signal counts at most MaxInt32 containers; beyond int's range
		// int(v) would wrap to a negative threshold, always reached.
		if v > math.MaxInt32 {
			return Query{}, fmt.Errorf("query %q: at least %s containers can never happen", s, m[2])
		}
		q.Count = int(v)
	}
	return q, nil
}

// Threshold is k for r selected containers.
func (q Query) Threshold(r int) int {
	if q.IsPct {
		return int(math.Ceil(q.Percent / 100 * float64(r)))
	}
	return q.Count
}
