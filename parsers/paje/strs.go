package paje

import (
	"encoding/binary"
	"unsafe"
)

// Strings of the output (entity values, link keys) are made without an
// allocation per line:
//
//   - a recurring value is interned: the strTable remembers recent values
//     in a fixed-size table, allocated once each;
//   - a value seen for the first time (task ids, pointers, link keys: most
//     are never seen again) is carved out of a shared slab instead of
//     allocated on its own, one allocation per slabBytes of such strings.
//
// A slab lives as long as any of its strings: a consumer that keeps one of
// them (a map keyed by a value it saw once) keeps its slab, at most
// slabBytes, alive. Recurring values, the ones consumers key maps on, are
// interned strings of their own after a few sightings.

const (
	slabBytes   = 16 << 10
	strTabSlots = 1 << 12 // interned values
	// maxSlabbed is the longest string interned or carved out of a slab;
	// longer ones are allocated on their own.
	maxSlabbed = 1 << 10
)

// nameKey is the key of a container's or type's name in the simulator's
// caches: for a name of at most eight bytes (nearly all: "t22038", "WS"),
// the bytes themselves, so that equal lengths and equal keys mean equal
// names and a cache hit needs no string comparison (runtime.memequal's
// call was 4% of the 41 MB trace's profile); for a longer name, a mix of
// its first and last eight bytes, and the names are compared. Decoding
// goroutines compute it ahead of the simulator (decoded.hashFields).
func nameKey(b []byte) uint64 {
	n := len(b)
	switch {
	case n > 8:
		return binary.LittleEndian.Uint64(b)*keyMul ^ binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		// Two 4-byte loads, overlapping for fewer than eight bytes:
		// the bytes they share are the same.
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*(n-4)&63)
	case n == 0:
		return 0
	}
	k := uint64(b[0])
	if n > 1 {
		// One 2-byte load: its first byte is b[0] when n is 2.
		k |= uint64(binary.LittleEndian.Uint16(b[n-2:])) << (8 * (n - 2) & 63)
	}
	return k
}

// keyMul is an odd constant with well-mixed bits (2⁶⁴/φ).
const keyMul = 0x9E3779B97F4A7C15

// keySlot is a name key's slot in a cache of 2^bits slots (or buckets):
// its top bits once multiplied, which depend on all its bytes.
func keySlot(k uint64, bits uint) uint64 { return k * keyMul >> (64 - bits) }

// keyIs reports whether a cached name, of key kw, is b, of key k.
func keyIs(name string, kw uint64, b []byte, k uint64) bool {
	return kw == k && len(name) == len(b) && (len(b) <= 8 || name == string(b))
}

// hashBytes is 32-bit FNV-1a, the string table's hash: few instructions
// on the short values of traces.
func hashBytes(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// strTable makes strings of bytes: interned when recurring, slab-allocated
// when new. It is not safe for concurrent use.
type strTable struct {
	// slots holds interned strings in a direct-mapped table; seen[i] is
	// the hash of the last value that missed slot i and misses how many
	// times in a row it did: a value is interned at its internAfter-th
	// miss (ids that recur a couple of times are not).
	slots  [strTabSlots]string
	seen   [strTabSlots]uint32
	misses [strTabSlots]uint8
	slab   []byte
}

const internAfter = 16

// get returns a string equal to b.
func (t *strTable) get(b []byte) string {
	if len(b) > maxSlabbed {
		return string(b) // long values are neither interned nor slabbed
	}
	h := hashBytes(b)
	i := h & (strTabSlots - 1)
	if s := t.slots[i]; s == string(b) {
		return s
	}
	if t.seen[i] != h {
		t.seen[i], t.misses[i] = h, 0
	}
	if t.misses[i]++; t.misses[i] >= internAfter {
		// A recurring value: intern it.
		s := string(b)
		t.slots[i], t.misses[i] = s, 0
		return s
	}
	return t.slabbed(b)
}

// slabbed returns a copy of b carved out of the current slab.
func (t *strTable) slabbed(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxSlabbed {
		return string(b)
	}
	if len(t.slab)+len(b) > cap(t.slab) {
		t.slab = make([]byte, 0, slabBytes)
	}
	n := len(t.slab)
	t.slab = append(t.slab, b...)
	// The bytes are never written again: the string may alias them.
	return unsafe.String(&t.slab[n], len(b))
}
