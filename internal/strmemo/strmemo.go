// Package strmemo is a map keyed by strings with a small direct-mapped
// cache in front, keyed on the address of the string's bytes. The paje
// parser hands out one string per container and per recurring value
// (interned), so the cache answers most lookups with a shift and two
// comparisons instead of hashing the string: the maps of container names
// and state values were 7% of predict's CPU time.
//
// The cache trusts that a string's bytes do not change (Go's strings are
// immutable; the map's own keys rely on it too). A Map is not safe for
// concurrent use.
package strmemo

import "unsafe"

// slots is the cache's size, 1 << slotBits: a Map is 1.5 KB of cache
// (the live service keeps several per open trace), enough for the few
// dozen containers and values a trace's lookups cycle through.
const (
	slotBits = 6
	slots    = 1 << slotBits
)

// Map maps strings to values. The zero Map is empty and ready to use.
type Map[V any] struct {
	slots [slots]slot[V]
	m     map[string]V
}

type slot[V any] struct {
	key string
	val V
}

func index(s string) (*byte, uintptr) {
	p := unsafe.StringData(s)
	u := uintptr(unsafe.Pointer(p))
	return p, uintptr(uint64(u) * 0x9E3779B97F4A7C15 >> (64 - slotBits)) // Fibonacci hashing: the product's top bits
}

// Get returns the value of s and whether it is in the map.
func (m *Map[V]) Get(s string) (V, bool) {
	if s == "" {
		v, ok := m.m[s]
		return v, ok
	}
	p, i := index(s)
	if sl := &m.slots[i]; unsafe.StringData(sl.key) == p && len(sl.key) == len(s) {
		return sl.val, true
	}
	v, ok := m.m[s]
	if ok {
		m.slots[i] = slot[V]{s, v}
	}
	return v, ok
}

// Put sets the value of s.
func (m *Map[V]) Put(s string, v V) {
	if m.m == nil {
		m.m = map[string]V{}
	}
	m.m[s] = v
	if s != "" {
		_, i := index(s)
		m.slots[i] = slot[V]{s, v}
	}
}

// Len is the number of strings in the map.
func (m *Map[V]) Len() int { return len(m.m) }
