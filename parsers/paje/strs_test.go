package paje

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestStrTable: strings equal their bytes whatever happens to the bytes
// afterwards; a recurring value is interned (the same string each time)
// after internAfter sightings; values seen once share slabs; long values
// are copied on their own.
func TestStrTable(t *testing.T) {
	var tab strTable
	buf := []byte("Idle")
	first := tab.get(buf)
	buf[0] = 'X' // the caller's bytes change (a chunk is reused)
	if first != "Idle" {
		t.Fatalf("got %q after the bytes changed", first)
	}
	var last string
	for i := range internAfter + 2 {
		s := tab.get([]byte("Running"))
		if s != "Running" {
			t.Fatalf("sighting %d: %q", i, s)
		}
		if i > internAfter && unsafeData(s) != unsafeData(last) {
			t.Errorf("sighting %d: not the interned string", i)
		}
		last = s
	}
	// Values seen once come from one slab, one after the other.
	a, b := tab.get([]byte("task-1")), tab.get([]byte("task-2"))
	if a != "task-1" || b != "task-2" || unsafeData(b) != unsafeData(a)+uintptr(len(a)) {
		t.Errorf("not consecutive in a slab: %q %q", a, b)
	}
	long := strings.Repeat("v", maxSlabbed+1)
	if got := tab.get([]byte(long)); got != long {
		t.Errorf("long value: %d bytes", len(got))
	}
	if got := tab.get(nil); got != "" {
		t.Errorf("empty: %q", got)
	}
	// A slab filled up: the next string starts a new one, the old ones
	// keep their bytes.
	var all []string
	for i := range 3 * slabBytes / 10 {
		v := "value" + itoa(i%100000)
		s := tab.slabbed([]byte(v))
		if s != v {
			t.Fatalf("%q != %q", s, v)
		}
		all = append(all, s)
	}
	for i, s := range all {
		if want := "value" + itoa(i%100000); s != want {
			t.Fatalf("string %d became %q", i, s)
		}
	}
}

func unsafeData(s string) uintptr {
	if len(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}

// TestHashBytes: the caches index with the hash's low bits, so those must
// depend on every byte: changing any one byte of a name of any length
// changes the low 8 bits nearly always, and the keys of a trace (worker
// and thread containers, numbered) spread evenly over a cache's slots.
func TestHashBytes(t *testing.T) {
	// FNV-1a's reference values.
	for _, c := range []struct {
		in   string
		want uint32
	}{{"", 0x811c9dc5}, {"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		if got := hashBytes([]byte(c.in)); got != c.want {
			t.Errorf("%q: %#x, want %#x", c.in, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	same, tries := 0, 0
	for n := 1; n <= 40; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			h := hashBytes(b)
			if hashBytes(append([]byte(nil), b...)) != h {
				t.Fatalf("%q: not deterministic", b)
			}
			for i := range b {
				c := b[i]
				b[i] = byte('0' + r.IntN(10))
				if hashBytes(b)&0xff == h&0xff {
					same++
				}
				tries++
				b[i] = c
			}
		}
	}
	// A random 8-bit value would match 1 time in 256.
	if same*64 > tries {
		t.Errorf("one byte changed, low 8 bits unchanged %d times in %d", same, tries)
	}
	for _, prefix := range []string{"w", "t", "mm", "CPU", "UserThread"} {
		var slots [256]int
		for i := range 512 {
			slots[hashBytes([]byte(prefix+strconv.Itoa(i)))&255]++
		}
		if m := slices.Max(slots[:]); m > 10 {
			t.Errorf("%s0 to %s511: %d in one of 256 slots", prefix, prefix, m)
		}
	}
}

// TestNumID: event ids "0" to "255" written without leading zeros are
// numbers, anything else is not (checked against the plain loop on every
// string of up to four digits and neighbouring bytes).
func TestNumID(t *testing.T) {
	ref := func(b []byte) int {
		if len(b) == 0 || len(b) > 3 || len(b) > 1 && b[0] == '0' {
			return -1
		}
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		if n >= maxNumID {
			return -1
		}
		return n
	}
	const chars = "0123456789/:a"
	var gen func(b []byte)
	gen = func(b []byte) {
		if got, want := numID(b), ref(b); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
		if len(b) < 4 {
			for i := range len(chars) {
				gen(append(b, chars[i]))
			}
		}
	}
	gen(nil)
}
