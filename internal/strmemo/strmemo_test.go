package strmemo

import (
	"fmt"
	"strings"
	"testing"
)

// The cache answers as the map does: strings with equal bytes at other
// addresses, the empty string, values overwritten, keys colliding in a
// slot.
func TestMapIsAMap(t *testing.T) {
	var m Map[int]
	want := map[string]int{}
	keys := []string{""}
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("CPU%d", i%700))
	}
	for i, k := range keys {
		if i%3 == 0 {
			m.Put(k, i)
			want[k] = i
		}
		// The same bytes elsewhere in memory.
		for _, q := range []string{k, strings.Clone(k)} {
			v, ok := m.Get(q)
			if w, wok := want[q]; ok != wok || v != w {
				t.Fatalf("Get(%q) = %d, %v; want %d, %v", q, v, ok, w, wok)
			}
		}
	}
	if m.Len() != len(want) {
		t.Fatalf("Len %d, want %d", m.Len(), len(want))
	}
}

func BenchmarkGet(b *testing.B) {
	var m Map[int]
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("CPU%d", i)
		m.Put(names[i], i)
	}
	plain := map[string]int{}
	for i, n := range names {
		plain[n] = i
	}
	b.Run("memo", func(b *testing.B) {
		s := 0
		for b.Loop() {
			for _, n := range names {
				v, _ := m.Get(n)
				s += v
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		s := 0
		for b.Loop() {
			for _, n := range names {
				s += plain[n]
			}
		}
	})
}
