// Package memlimit chooses and sets the Go runtime's soft memory limit for a
// command whose live heap is bounded by its configured limits (the Paje
// reader's: paje.Options.HeapBound).
//
// The limit is, in order of precedence: an explicit value (a command's
// --memory-limit flag), GOMEMLIMIT, or the limit derived from the bound:
// twice the bound (the heap the collector lets grow at GOGC=100 when the
// live heap reaches its bound) plus the runtime's own overhead. Below it
// the collector paces itself by GOGC alone, so it never runs continuously
// however long the input; the limit only matters if the live heap nears
// what the configured limits allow. Values use GOMEMLIMIT's syntax: a
// number of bytes with an optional unit (B, KiB, MiB, GiB, TiB), or "off".
package memlimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Overhead is what the runtime needs beside the heap (goroutine stacks,
// collector metadata, buffers of the output).
const Overhead = 16 << 20

// Off is the limit that means none (GOMEMLIMIT=off).
const Off = math.MaxInt64

// Derive returns the soft memory limit for a live heap bounded by bound
// bytes: 2·bound + Overhead.
func Derive(bound int64) int64 {
	if bound <= 0 {
		return Overhead
	}
	if bound > (Off-Overhead)/2 {
		return Off
	}
	return 2*bound + Overhead
}

// Limit is a memory limit and where it comes from.
type Limit struct {
	// Bytes is the limit; Off for none.
	Bytes int64
	// Source is "flag", "GOMEMLIMIT" or "derived".
	Source string
}

// String describes the limit: "64 MiB (derived)".
func (l Limit) String() string {
	if l.Bytes == Off {
		return "off (" + l.Source + ")"
	}
	return Format(l.Bytes) + " (" + l.Source + ")"
}

// Choose returns the limit: explicit when it is not empty, else env (the
// value of GOMEMLIMIT) when it is not empty, else Derive(bound).
func Choose(explicit, env string, bound int64) (Limit, error) {
	if explicit != "" {
		b, err := Parse(explicit)
		if err != nil {
			return Limit{}, fmt.Errorf("--memory-limit: %w", err)
		}
		return Limit{b, "flag"}, nil
	}
	if env != "" {
		b, err := Parse(env)
		if err != nil {
			return Limit{}, fmt.Errorf("GOMEMLIMIT: %w", err)
		}
		return Limit{b, "GOMEMLIMIT"}, nil
	}
	return Limit{Derive(bound), "derived"}, nil
}

// Set chooses the limit (with the GOMEMLIMIT of the environment) and sets
// it, unless it comes from GOMEMLIMIT, which the runtime applied at start.
// An explicit value that is not a positive size or "off" is an error (a
// usage error for a command), and nothing is set.
func Set(explicit string, bound int64) (Limit, error) {
	l, err := Choose(explicit, os.Getenv("GOMEMLIMIT"), bound)
	if err != nil {
		return l, err
	}
	if l.Source != "GOMEMLIMIT" {
		SetLimit(l.Bytes)
	}
	return l, nil
}

var units = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// Parse reads a size in GOMEMLIMIT's syntax ("512MiB", "2GiB", "1048576",
// "off"). Zero, negative and overflowing sizes are errors: a limit must be
// positive.
func Parse(s string) (int64, error) {
	if s == "off" {
		return Off, nil
	}
	num, shift := s, uint(0)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil || num == "" || num[0] == '+' || num[0] == '-' && n == 0:
		return 0, fmt.Errorf("%q is not a size (bytes with an optional unit B, KiB, MiB, GiB, TiB, or off)", s)
	case n <= 0:
		return 0, errors.New("must be positive (got " + s + "; off means no limit)")
	case n > Off>>shift:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << shift, nil
}

// Format writes a size in the largest unit that divides it ("64MiB"),
// in GOMEMLIMIT's syntax.
func Format(b int64) string {
	if b == Off {
		return "off"
	}
	for _, u := range units {
		if b >= 1<<u.shift && b%(1<<u.shift) == 0 {
			return strconv.FormatInt(b>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}
