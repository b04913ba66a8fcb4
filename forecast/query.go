package forecast

import (
	"fmt"
	"math"
	"math/bits"
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
	// num/den is Percent/100 exactly, as written in decimal (0 den: from
	// Percent), so that k is exact: in floating point 0.07·100 is
	// 7.000000000000001, and 7% of 100 workers would be 8.
	num, den uint64
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
		// At most 12 decimals (a share of 10⁻¹⁴): den stays within 10¹⁴.
		ip, fp, _ := strings.Cut(m[2], ".")
		fp = strings.TrimRight(fp, "0")
		if len(fp) > 12 {
			return Query{}, fmt.Errorf("query %q: at most 12 decimals in a percentage", s)
		}
		if digits := strings.TrimLeft(ip, "0") + fp; digits != "" { // "": 0%
			q.num, _ = strconv.ParseUint(digits, 10, 64)
		}
		q.den = 100 * uint64(math.Pow10(len(fp)))
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

// Threshold is k for r selected containers: ⌈pct·r⌉ for a percentage,
// computed exactly.
func (q Query) Threshold(r int) int {
	switch {
	case !q.IsPct:
		return q.Count
	case r <= 0:
		return 0
	case q.den == 0: // a Query not made by ParseQuery
		return int(math.Ceil(q.Percent / 100 * float64(r)))
	}
	// num ≤ den (at most 100%): the product's high word is below den.
	hi, lo := bits.Mul64(q.num, uint64(r))
	k, rem := bits.Div64(hi, lo, q.den)
	if rem > 0 {
		k++
	}
	return int(k)
}
