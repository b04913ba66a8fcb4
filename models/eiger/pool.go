package eiger

import (
	"fmt"
	"math"
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
)

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

// Term is one regressor: a pool function of variable I (and J for x*y).
type Term struct {
	F    Func
	I, J int
}

// Name is the term's name with the variables' names for x and y: Size^2,
// log2(Size), Size*Priority.
func (t Term) Name(vars []string) string {
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

// ParseTerm reads a term name back against the variables' names.
func ParseTerm(name string, vars []string) (Term, error) {
	for i, x := range vars {
		switch name {
		case x + "^-2":
			return Term{F: InvSq, I: i}, nil
		case x + "^-1":
			return Term{F: Inv, I: i}, nil
		case x + "^-0.5":
			return Term{F: InvSqrt, I: i}, nil
		case "log2(" + x + ")":
			return Term{F: Log2, I: i}, nil
		case x + "^0.5":
			return Term{F: Sqrt, I: i}, nil
		case x:
			return Term{F: Lin, I: i}, nil
		case x + "^2":
			return Term{F: Sq, I: i}, nil
		}
		for j, y := range vars {
			if name == x+"*"+y {
				return Term{F: Prod, I: i, J: j}, nil
			}
		}
	}
	return Term{}, fmt.Errorf("term %q: not a pool function of the variables %s", name, strings.Join(vars, ", "))
}

// CheckName refuses variable names that would make term names ambiguous.
func CheckName(name string) error {
	if name == "" || name == "1" || strings.ContainsAny(name, "*^()") {
		return fmt.Errorf("input name %q: must not be empty, 1, or contain * ^ ( )", name)
	}
	return nil
}
