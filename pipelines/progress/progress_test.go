package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		s     Snapshot
		width int
		want  string
	}{
		{
			name:  "known total",
			s:     Snapshot{Bytes: 512 << 20, Total: 2 << 30, Rate: 32 << 20, ETA: 48 * time.Second, Records: 1234},
			width: 100,
			want:  " 25% [=========>                             ] 512.0 MiB/2.0 GiB  32.0 MiB/s  ETA 0:48  1234 records",
		},
		{
			name:  "unknown total",
			s:     Snapshot{Bytes: 1500, Total: -1, Rate: 100, Lines: 7},
			width: 80,
			want:  "1.5 KiB  100 B/s  7 lines",
		},
		{
			name:  "done",
			s:     Snapshot{Bytes: 10, Total: 10, Rate: 5, Elapsed: 3725 * time.Second, Done: true},
			width: 80,
			want:  "100% [========================================] 10 B/10 B  5 B/s  in 1:02:05",
		},
		{
			name:  "narrow terminal drops the bar",
			s:     Snapshot{Bytes: 5, Total: 10, Rate: 1, ETA: 5 * time.Second},
			width: 30,
			want:  " 50% 5 B/10 B  1 B/s  ETA 0:05",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Render(tt.s, tt.width)
			if got != tt.want {
				t.Errorf("Render =\n%q\nwant\n%q", got, tt.want)
			}
			if len(got) > tt.width {
				t.Errorf("%d columns, want at most %d", len(got), tt.width)
			}
		})
	}
}

func TestMeter(t *testing.T) {
	start := time.Unix(1000, 0)
	m := NewMeter(start)
	var s Snapshot
	// 100 bytes/s for 20 s, out of 4000.
	for i := 1; i <= 20; i++ {
		s = m.Update(start.Add(time.Duration(i)*time.Second), int64(100*i), 4000, int64(i), int64(2*i))
	}
	if s.Rate != 100 || s.ETA != 20*time.Second || s.Elapsed != 20*time.Second || s.Fraction() != 0.5 {
		t.Errorf("steady: %+v", s)
	}
	// The rate halves: the smoothed rate moves towards 50, not at once.
	s = m.Update(start.Add(21*time.Second), 2050, 4000, 21, 42)
	if s.Rate <= 50 || s.Rate >= 100 {
		t.Errorf("after a slowdown rate %.1f, want between 50 and 100", s.Rate)
	}
	for i := 22; i <= 60; i++ {
		s = m.Update(start.Add(time.Duration(i)*time.Second), int64(2050+50*(i-21)), 4000, 0, 0)
	}
	if s.Rate < 49 || s.Rate > 52 {
		t.Errorf("rate %.2f after 40 s at 50 B/s", s.Rate)
	}
	// Same instant twice: no division by zero.
	s2 := m.Update(start.Add(60*time.Second), s.Bytes, 4000, 0, 0)
	if s2.Rate != s.Rate {
		t.Errorf("rate changed without time passing: %v -> %v", s.Rate, s2.Rate)
	}
	if (Snapshot{Total: -1}).Fraction() != -1 {
		t.Error("unknown total has a fraction")
	}
}

func TestBarAndWrap(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(&out)
	logs := b.Wrap(&out)
	if _, err := logs.Write([]byte("before\n")); err != nil {
		t.Fatal(err)
	}
	b.Update(Snapshot{Bytes: 1, Total: 2, Rate: 1})
	if _, err := logs.Write([]byte("log line\n")); err != nil {
		t.Fatal(err)
	}
	b.Update(Snapshot{Bytes: 2, Total: 2, Rate: 1, Done: true})
	b.Update(Snapshot{Bytes: 3, Total: 2}) // ignored after Done
	b.Finish()
	got := out.String()
	bar1 := Render(Snapshot{Bytes: 1, Total: 2, Rate: 1}, 79)
	want := "before\n" +
		"\r\x1b[K" + bar1 +
		"\r\x1b[K" + "log line\n" + bar1 +
		"\r\x1b[K" + Render(Snapshot{Bytes: 2, Total: 2, Rate: 1, Done: true}, 79) + "\n"
	if got != want {
		t.Errorf("output\n%q\nwant\n%q", got, want)
	}
	if strings.Count(got, "\n") != 3 {
		t.Errorf("want 3 lines: %q", got)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
