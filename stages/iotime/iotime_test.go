package iotime

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/iocall"
)

func TestBuckets(t *testing.T) {
	b, err := ParseBuckets("4K,64K,1M")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size int64
		want string
	}{{0, "<4K"}, {4095, "<4K"}, {4096, "4K-64K"}, {65536, "64K-1M"}, {1 << 20, ">=1M"}, {1 << 30, ">=1M"}} {
		if got := b.Name(b.Index(tc.size)); got != tc.want {
			t.Errorf("%d: %s want %s", tc.size, got, tc.want)
		}
	}
	if _, err := ParseBuckets("64K,4K"); err == nil {
		t.Error("descending buckets accepted")
	}
}

func TestSummaryAndStates(t *testing.T) {
	calls, _, err := iocall.ReadFile("../../testdata/iocall/dd_tt_y.strace", "", iocall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(nil)
	var states []tracecast.Entity
	err = p.Process(context.Background(), tracecast.Batch{Items: calls}, func(_ context.Context, b tracecast.Batch) error {
		states = append(states, b.Items.([]tracecast.Entity)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Summary()
	rd, ok := s.Category("read/4K-64K/seq")
	if !ok || rd.Calls < 17 || rd.Bytes < 16*16384 {
		t.Fatalf("dd reads: %+v", rd)
	}
	wr, ok := s.Category("write/4K-64K/seq")
	if !ok || wr.Calls != 16 || wr.MaxEnd != 256<<10 {
		t.Fatalf("dd writes: %+v", wr)
	}
	if _, ok := s.Category("sync/-/-"); !ok {
		t.Fatal("no fsync category")
	}
	var sum float64
	var n int64
	for _, c := range s.Categories {
		sum += c.Time
		n += c.Calls
		if math.Abs(c.Mean*float64(c.Calls)-c.Time) > 1e-12 {
			t.Errorf("mean of %s", c.Key)
		}
	}
	if n != s.Total.Calls || math.Abs(sum-s.Total.Time) > 1e-9 || int64(len(states)) != n {
		t.Fatalf("total %+v vs %d calls %g s, %d states", s.Total, n, sum, len(states))
	}
	for _, e := range states {
		if e.Type != StateType || e.Container != "pid 31471" || e.End < e.Start || e.Value == "" {
			t.Fatalf("state %+v", e)
		}
	}
	var pt float64
	for _, ps := range s.Processes {
		pt += ps.Time
	}
	if math.Abs(pt-s.Total.Time) > 1e-9 {
		t.Fatal("per-process times do not add up")
	}
}

// TestEmitSummary: with EmitSummary, Flush hands over the breakdown of
// everything that went through, after the states; without it, nothing.
func TestEmitSummary(t *testing.T) {
	calls, _, err := iocall.ReadFile("../../testdata/iocall/sh_fork.strace", "", iocall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agg := New(nil)
	for i := range calls {
		agg.Add(&calls[i])
	}
	want := agg.Summary()
	for _, on := range []bool{false, true} {
		p := NewProcessor(nil)
		p.EmitSummary = on
		var got []Summary
		var states int
		emit := func(_ context.Context, b tracecast.Batch) error {
			switch items := b.Items.(type) {
			case []Summary:
				got = append(got, items...)
			case []tracecast.Entity:
				if len(got) > 0 {
					t.Fatal("states after the summary")
				}
				states += len(items)
			}
			return nil
		}
		ctx := context.Background()
		for i := 0; i < len(calls); i += 100 {
			if err := p.Process(ctx, tracecast.Batch{Items: calls[i:min(i+100, len(calls))]}, emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(ctx, emit); err != nil {
			t.Fatal(err)
		}
		if int64(states) != want.Total.Calls {
			t.Fatalf("summary %v: %d states, %d calls", on, states, want.Total.Calls)
		}
		if !on {
			if len(got) != 0 {
				t.Fatal("summary emitted without EmitSummary")
			}
			continue
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	}
}

// TestParseSize: sizes are positive int64s; one that does not fit is an
// error, not a wrapped (negative or smaller) value, and an empty string is
// an error, not a panic.
func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"4096", 4096}, {"4K", 4096}, {"64k", 64 << 10}, {"1M", 1 << 20}, {"2g", 2 << 30},
		{"8589934591G", 8589934591 << 30},
		{"8589934592G", 0}, {"9000000000000G", 0}, {"9223372036854775807", math.MaxInt64},
		{"", 0}, {"K", 0}, {"0", 0}, {"-1K", 0}, {"1.5M", 0}, {"1T", 0},
	} {
		got, err := ParseSize(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// TestEmptySummaryLists: a profile without calls has empty lists, not
// null ones, in its JSON.
func TestEmptySummaryLists(t *testing.T) {
	b, err := json.Marshal(New(nil).Summary())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"categories":[]`, `"processes":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: no %s", b, want)
		}
	}
}
