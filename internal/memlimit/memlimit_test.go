package memlimit

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{"off", Off, ""},
		{"1", 1, ""},
		{"1048576", 1 << 20, ""},
		{"512B", 512, ""},
		{"64KiB", 64 << 10, ""},
		{"52MiB", 52 << 20, ""},
		{"2GiB", 2 << 30, ""},
		{"1TiB", 1 << 40, ""},
		{"0", 0, "must be positive"},
		{"0MiB", 0, "must be positive"},
		{"-5MiB", 0, "must be positive"},
		{"", 0, "not a size"},
		{"MiB", 0, "not a size"},
		{"64MB", 0, "not a size"},
		{"64 MiB", 0, "not a size"},
		{"+64MiB", 0, "not a size"},
		{"1.5GiB", 0, "not a size"},
		{"Off", 0, "not a size"},
		{"9000000TiB", 0, "too large"},
		{"99999999999999999999", 0, "not a size"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %d, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{{Off, "off"}, {52 << 20, "52MiB"}, {3 << 30, "3GiB"}, {1536, "1536B"}, {1000, "1000B"}, {1 << 40, "1TiB"}} {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%d) = %s, want %s", c.in, got, c.want)
		}
		if c.in != Off {
			if back, err := Parse(Format(c.in)); err != nil || back != c.in {
				t.Errorf("Parse(Format(%d)) = %d, %v", c.in, back, err)
			}
		}
	}
}

func TestDerive(t *testing.T) {
	for _, c := range []struct{ bound, want int64 }{
		{0, Overhead},
		{-1, Overhead},
		{10 << 20, 20<<20 + Overhead},
		{math.MaxInt64 / 2, Off},
		{math.MaxInt64, Off},
	} {
		if got := Derive(c.bound); got != c.want {
			t.Errorf("Derive(%d) = %d, want %d", c.bound, got, c.want)
		}
	}
}

// TestChoose: the flag wins over GOMEMLIMIT, which wins over the derived
// limit; a bad value is an error naming where it comes from.
func TestChoose(t *testing.T) {
	const bound = 100 << 20
	cases := []struct {
		explicit, env string
		want          Limit
		err           string
	}{
		{"", "", Limit{Derive(bound), "derived"}, ""},
		{"", "1GiB", Limit{1 << 30, "GOMEMLIMIT"}, ""},
		{"", "off", Limit{Off, "GOMEMLIMIT"}, ""},
		{"64MiB", "1GiB", Limit{64 << 20, "flag"}, ""},
		{"off", "", Limit{Off, "flag"}, ""},
		{"0", "", Limit{}, "--memory-limit: must be positive"},
		{"lots", "1GiB", Limit{}, "--memory-limit: \"lots\" is not a size"},
		{"", "1GB", Limit{}, "GOMEMLIMIT: \"1GB\" is not a size"},
	}
	for _, c := range cases {
		got, err := Choose(c.explicit, c.env, bound)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Choose(%q, %q): %v, %v; want error %q", c.explicit, c.env, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Choose(%q, %q) = %v, %v; want %v", c.explicit, c.env, got, err, c.want)
		}
	}
}

// TestSet: the chosen limit is applied, except one from GOMEMLIMIT (the
// runtime applied it at start); an error sets nothing.
func TestSet(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "")
	l, err := Set("", 10<<20)
	if err != nil || l.Source != "derived" || debug.SetMemoryLimit(-1) != Derive(10<<20) {
		t.Fatalf("derived: %v %v, runtime limit %d", l, err, debug.SetMemoryLimit(-1))
	}
	if l, err = Set("96MiB", 10<<20); err != nil || debug.SetMemoryLimit(-1) != 96<<20 {
		t.Fatalf("flag: %v %v, runtime limit %d", l, err, debug.SetMemoryLimit(-1))
	}
	if _, err = Set("-1", 10<<20); err == nil || debug.SetMemoryLimit(-1) != 96<<20 {
		t.Fatalf("a bad flag: %v, runtime limit %d", err, debug.SetMemoryLimit(-1))
	}
	t.Setenv("GOMEMLIMIT", "3GiB")
	if l, err = Set("", 10<<20); err != nil || l.Source != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 96<<20 {
		t.Fatalf("GOMEMLIMIT: %v %v, runtime limit %d (must be left as the runtime set it)", l, err, debug.SetMemoryLimit(-1))
	}
	if got := (Limit{64 << 20, "derived"}).String(); got != "64MiB (derived)" {
		t.Errorf("String: %s", got)
	}
	if got := (Limit{Off, "flag"}).String(); got != "off (flag)" {
		t.Errorf("String: %s", got)
	}
}
