package eiger

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Func is a function of Table 1's model pool.
type Func int

// Table 1's model pool, in its order.
const (
	InvSq   Func = iota // x^-2
	Inv                 // x^-1
	InvSqrt             // x^-0.5
	Log2                // log2(x)
	Sqrt                // x^0.5
	Lin                 // x
	Sq                  // x^2
	Prod                // x*y
	// Mono is a product of up to four factors (Term.P): not one of Table
	// 1's functions, and not a name of the pool.
	Mono
)

// MaxFactors is the most factors a product term may have.
const MaxFactors = 4

// ProductFactors are the factors of product terms when the pool is not
// restricted: x and log2(x), whose products of up to four give Table 1's
// x, x^2, log2(x) and x*y, and x^3, M^2*N, N^3*K, N*log2(N), ...
var ProductFactors = []Func{Log2, Lin}

// ProductSingles are the powers in the default product pool alone (not
// multiplied): Table 1's other functions x^-2, x^-1, x^-0.5, x^0.5, and
// x^1.5 — a dense kernel's N^3 in terms of its data size (N^2 elements),
// StarPU's Size. Products of inverses and roots as well (--regressors
// with --max-factors) make the pool several times larger, and on StarPU's
// mlr example their compromises (N^2.5*K for N^3*K + M^2*N) were chosen
// more often and predicted worse (docs/tasks.md).
var ProductSingles = []float64{-2, -1, -0.5, 0.5, 1.5}

// Factor is one variable's part of a product term: variable V raised to
// Pow, times log2(V) raised to Log.
type Factor struct {
	V   int
	Pow float64
	Log int
}

// PoolNames are the pool's function names, as the --regressors option and
// the model file's term names use them (x, y standing for inputs).
var PoolNames = []string{"x^-2", "x^-1", "x^-0.5", "log2(x)", "x^0.5", "x", "x^2", "x*y"}

// ParsePool reads a comma-separated list of pool names ("" is the whole
// pool).
func ParsePool(s string) ([]Func, error) {
	if strings.TrimSpace(s) == "" {
		return []Func{InvSq, Inv, InvSqrt, Log2, Sqrt, Lin, Sq, Prod}, nil
	}
	var out []Func
	seen := map[Func]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := indexOf(PoolNames, f)
		if i < 0 {
			return nil, fmt.Errorf("regressor %q is not one of %s", f, strings.Join(PoolNames, ", "))
		}
		if !seen[Func(i)] {
			seen[Func(i)] = true
			out = append(out, Func(i))
		}
	}
	return out, nil
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Term is one regressor: a pool function of variable I (and J for x*y),
// or (F Mono) the product of the factors P[:NP], one per variable, in the
// variables' order.
type Term struct {
	F    Func
	I, J int
	P    [MaxFactors]Factor
	NP   int
}

// Vars are the indices of the variables the term reads.
func (t Term) Vars() []int {
	switch t.F {
	case Mono:
		out := make([]int, t.NP)
		for k := range t.NP {
			out[k] = t.P[k].V
		}
		return out
	case Prod:
		return []int{t.I, t.J}
	}
	return []int{t.I}
}

// Name is the term's name with the variables' names for x and y: Size^2,
// log2(Size), Size*Priority.
func (t Term) Name(vars []string) string {
	if t.F == Mono {
		var parts []string
		for _, f := range t.P[:t.NP] {
			x := vars[f.V]
			switch f.Pow {
			case 0:
			case 1:
				parts = append(parts, x)
			default:
				parts = append(parts, x+"^"+strconv.FormatFloat(f.Pow, 'g', -1, 64))
			}
			switch f.Log {
			case 0:
			case 1:
				parts = append(parts, "log2("+x+")")
			default:
				parts = append(parts, "log2("+x+")^"+strconv.Itoa(f.Log))
			}
		}
		return strings.Join(parts, "*")
	}
	x := vars[t.I]
	switch t.F {
	case InvSq:
		return x + "^-2"
	case Inv:
		return x + "^-1"
	case InvSqrt:
		return x + "^-0.5"
	case Log2:
		return "log2(" + x + ")"
	case Sqrt:
		return x + "^0.5"
	case Lin:
		return x
	case Sq:
		return x + "^2"
	}
	return x + "*" + vars[t.J]
}

// Eval is the term's value on a row of variables; not finite outside the
// function's domain (x^-1 at 0, log2 of a negative number, ...).
func (t Term) Eval(v []float64) float64 {
	if t.F == Mono {
		p := 1.0
		for _, f := range t.P[:t.NP] {
			p *= factorEval(v[f.V], f)
		}
		return p
	}
	x := v[t.I]
	switch t.F {
	case InvSq:
		return 1 / (x * x)
	case Inv:
		return 1 / x
	case InvSqrt:
		return 1 / math.Sqrt(x)
	case Log2:
		if x <= 0 {
			return math.NaN()
		}
		return math.Log2(x)
	case Sqrt:
		return math.Sqrt(x)
	case Lin:
		return x
	case Sq:
		return x * x
	}
	return x * v[t.J]
}

// factorEval is x^Pow·log2(x)^Log: NaN or infinite outside the domain.
// The powers of Table 1 are computed as its functions are (x*x, 1/x,
// math.Sqrt), integer powers by repeated products, others by math.Pow.
func factorEval(x float64, f Factor) float64 {
	p := 1.0
	switch f.Pow {
	case 0:
	case 1:
		p = x
	case 2:
		p = x * x
	case -1:
		p = 1 / x
	case -2:
		p = 1 / (x * x)
	case 0.5:
		p = math.Sqrt(x)
	case -0.5:
		p = 1 / math.Sqrt(x)
	default:
		if k := math.Abs(f.Pow); k == math.Trunc(k) && k <= 16 {
			for range int(k) {
				p *= x
			}
			if f.Pow < 0 {
				p = 1 / p
			}
		} else {
			p = math.Pow(x, f.Pow)
		}
	}
	if f.Log > 0 {
		if x <= 0 {
			return math.NaN()
		}
		l := math.Log2(x)
		for range f.Log {
			p *= l
		}
	}
	return p
}

// funcFactor is a Table 1 function as a factor of a product.
func funcFactor(f Func, v int) Factor {
	switch f {
	case InvSq:
		return Factor{V: v, Pow: -2}
	case Inv:
		return Factor{V: v, Pow: -1}
	case InvSqrt:
		return Factor{V: v, Pow: -0.5}
	case Log2:
		return Factor{V: v, Log: 1}
	case Sqrt:
		return Factor{V: v, Pow: 0.5}
	case Sq:
		return Factor{V: v, Pow: 2}
	}
	return Factor{V: v, Pow: 1}
}

// monomial builds the product term of factors (any order, a variable more
// than once: powers add up). ok is false when the product is constant or
// reads more than MaxFactors variables.
func monomial(factors []Factor) (Term, bool) {
	var t Term
	t.F = Mono
	byVar := map[int]Factor{}
	for _, f := range factors {
		g := byVar[f.V]
		g.V, g.Pow, g.Log = f.V, g.Pow+f.Pow, g.Log+f.Log
		byVar[f.V] = g
	}
	var vs []int
	for v, g := range byVar {
		if g.Pow != 0 || g.Log != 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 || len(vs) > MaxFactors {
		return t, false
	}
	slices.Sort(vs)
	for k, v := range vs {
		t.P[k] = byVar[v]
	}
	t.NP = len(vs)
	return t, true
}

// DefaultProducts is the default product pool of nvars variables: the
// products of up to maxFactors factors ProductFactors, then each
// ProductSingles function of each variable.
func DefaultProducts(nvars, maxFactors int) []Term {
	ts := Products(nvars, ProductFactors, maxFactors)
	seen := map[Term]bool{}
	for _, t := range ts {
		seen[t] = true
	}
	for v := range nvars {
		for _, p := range ProductSingles {
			if t, _ := monomial([]Factor{{V: v, Pow: p}}); !seen[t] {
				seen[t] = true
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// Products are the distinct product terms of up to maxFactors factors,
// each a function of funcs (Prod is ignored) of one of nvars variables:
// smaller products first, then in the order of the variables and of funcs.
// Products equal to another (x^0.5*x^0.5 and x) or constant (x*x^-1)
// appear once or not at all.
func Products(nvars int, funcs []Func, maxFactors int) []Term {
	var base []Factor
	for v := range nvars {
		for _, f := range funcs {
			if f != Prod && f != Mono {
				base = append(base, funcFactor(f, v))
			}
		}
	}
	seen := map[Term]bool{}
	var out []Term
	idx := make([]int, 0, maxFactors)
	fs := make([]Factor, 0, maxFactors)
	// All products of k factors (i1 ≤ i2 ≤ ... ≤ ik) before those of k+1.
	var rec func(start, k int)
	rec = func(start, k int) {
		if len(idx) == k {
			fs = fs[:0]
			for _, i := range idx {
				fs = append(fs, base[i])
			}
			if t, ok := monomial(fs); ok && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
			return
		}
		for i := start; i < len(base); i++ {
			idx = append(idx, i)
			rec(i, k)
			idx = idx[:len(idx)-1]
		}
	}
	for k := 1; k <= maxFactors; k++ {
		rec(0, k)
	}
	return out
}

// ParseTerm reads a term name back against the variables' names: one of
// Table 1's, or a product of factors x, x^P, log2(x), log2(x)^K joined by
// "*" (M^2*N, N^3*K, N*log2(N): StarPU's names of monomials are such).
func ParseTerm(name string, vars []string) (Term, error) {
	if t, ok := parseTable1(name, vars); ok {
		return t, nil
	}
	var fs []Factor
	bad := func(why string) (Term, error) {
		return Term{}, fmt.Errorf("term %q: %s (variables %s)", name, why, strings.Join(vars, ", "))
	}
	for _, part := range strings.Split(name, "*") {
		var f Factor
		base, exp, hasExp := strings.Cut(part, "^")
		isLog := strings.HasPrefix(base, "log2(") && strings.HasSuffix(base, ")")
		if isLog {
			base = strings.TrimSuffix(strings.TrimPrefix(base, "log2("), ")")
		}
		v := indexOf(vars, base)
		if v < 0 {
			return bad(fmt.Sprintf("factor %q is not a power or log2 of a variable", part))
		}
		f.V = v
		switch {
		case isLog && hasExp:
			k, err := strconv.Atoi(exp)
			if err != nil || k < 1 || k > MaxFactors {
				return bad(fmt.Sprintf("factor %q: the power of a log2 must be 1 to %d", part, MaxFactors))
			}
			f.Log = k
		case isLog:
			f.Log = 1
		case hasExp:
			p, err := strconv.ParseFloat(exp, 64)
			if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p == 0 || math.Abs(p) > 64 || p*2 != math.Trunc(p*2) {
				return bad(fmt.Sprintf("factor %q: the power must be a non-zero multiple of 0.5 up to 64", part))
			}
			f.Pow = p
		default:
			f.Pow = 1
		}
		fs = append(fs, f)
	}
	t, ok := monomial(fs)
	if !ok {
		return bad(fmt.Sprintf("constant, or more than %d variables", MaxFactors))
	}
	return t, nil
}

// parseTable1 reads a name of Table 1's terms.
func parseTable1(name string, vars []string) (Term, bool) {
	for i, x := range vars {
		switch name {
		case x + "^-2":
			return Term{F: InvSq, I: i}, true
		case x + "^-1":
			return Term{F: Inv, I: i}, true
		case x + "^-0.5":
			return Term{F: InvSqrt, I: i}, true
		case "log2(" + x + ")":
			return Term{F: Log2, I: i}, true
		case x + "^0.5":
			return Term{F: Sqrt, I: i}, true
		case x:
			return Term{F: Lin, I: i}, true
		case x + "^2":
			return Term{F: Sq, I: i}, true
		}
		for j, y := range vars {
			if name == x+"*"+y {
				return Term{F: Prod, I: i, J: j}, true
			}
		}
	}
	return Term{}, false
}

// CheckName refuses variable names that would make term names ambiguous.
func CheckName(name string) error {
	if name == "" || name == "1" || strings.ContainsAny(name, "*^()") {
		return fmt.Errorf("input name %q: must not be empty, 1, or contain * ^ ( )", name)
	}
	return nil
}
