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

// TestHashBytes: the string table indexes with the hash's low bits, so those must
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

// TestNameKey: a name of at most eight bytes is its own key (its bytes,
// little-endian), so that a cache hit on equal lengths and keys needs no
// comparison; longer names' keys depend on their first and last eight
// bytes; numbered names spread over a cache's buckets (512 names in 128
// buckets: 4 on average).
func TestNameKey(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 8; n++ {
		for range 500 {
			b := make([]byte, n)
			var want uint64
			for i := range b {
				b[i] = byte(r.IntN(256))
				want |= uint64(b[i]) << (8 * i)
			}
			if got := nameKey(b); got != want {
				t.Fatalf("nameKey(%q) = %#x, want its bytes %#x", b, got, want)
			}
		}
	}
	for n := 9; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		k := nameKey(b)
		for _, i := range []int{0, 7, n - 8, n - 1} {
			c := b[i]
			b[i] = '0'
			if nameKey(b) == k {
				t.Errorf("%d bytes: byte %d changed, same key", n, i)
			}
			b[i] = c
		}
	}
	for _, prefix := range []string{"w", "t", "mm", "CPU", "UserThread"} {
		var slots [1 << contCacheBits]int
		for i := range 512 {
			slots[keySlot(nameKey([]byte(prefix+strconv.Itoa(i))), contCacheBits)]++
		}
		if m := slices.Max(slots[:]); m > 12 {
			t.Errorf("%s0 to %s511: %d in one of %d buckets", prefix, prefix, m, len(slots))
		}
	}
}

// TestNameKeyCollisions: containers, types and state values whose names
// share a key (longer than eight bytes, equal in their first and last
// eight) or a cache slot are told apart: each state lands on its own
// container with its own value.
func TestNameKeyCollisions(t *testing.T) {
	long := func(mid string) string { return "abcdefgh-" + mid + "-stuvwxyz" }
	if nameKey([]byte(long("X"))) != nameKey([]byte(long("Y"))) {
		t.Fatal("the long names no longer share a key: pick names that do")
	}
	v1, v2 := sameSlot("v", vcacheBits) // two short values in one slot of the value cache
	body := `%EventDef PajeDefineEntityValue 10
% Alias string
% Type string
% Name string
%EndEventDef
2 0 ` + long("X") + ` W p "worker X"
2 0 ` + long("Y") + ` W p "worker Y"
1 ` + long("S1") + ` W "State one"
1 ` + long("S2") + ` W "State two"
10 ` + long("A") + ` S Alpha
10 ` + long("B") + ` S Bravo
10 ` + v1 + ` S One
10 ` + v2 + ` S Two
`
	// Every container sets every state type to every value in turn;
	// each state is printed with its container's name, its type's name
	// and its value's name (the aliases are the S type's).
	var want []string
	n := 0
	for range 2 {
		for _, v := range [][2]string{{long("A"), "Alpha"}, {long("B"), "Bravo"}, {v1, "One"}, {v2, "Two"}} {
			for _, c := range []string{"X", "Y"} {
				for _, ty := range [][2]string{{"S", "Worker State"}, {long("S1"), "State one"}, {long("S2"), "State two"}} {
					n++
					body += "4 " + strconv.Itoa(n) + " " + long(c) + " " + ty[0] + " " + v[0] + "\n"
					name := v[0]
					if ty[0] == "S" {
						name = v[1]
					}
					want = append(want, "worker "+c+"|"+ty[1]+"|"+name)
				}
			}
		}
	}
	got, _, err := dump(t, strings.NewReader(hdr+body), pjOpts("collide"))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, l := range got {
		if f := strings.Split(l, ", "); f[0] == "State" {
			states = append(states, f[1]+"|"+f[2]+"|"+f[7])
		}
	}
	slices.Sort(states)
	slices.Sort(want)
	if !slices.Equal(states, want) {
		t.Errorf("states (container|type|value):\n%s\nwant:\n%s", strings.Join(states, "\n"), strings.Join(want, "\n"))
	}
}

// TestCacheTwoWay: two names that share a bucket of the type cache, looked
// up in turn, both stay in it (with one entry a bucket, WS and gf of the
// 41 MB trace took turns and missed at every line).
func TestCacheTwoWay(t *testing.T) {
	o := DefaultOptions()
	s := newSim(&o)
	a, b := sameSlot("T", typeCacheBits)
	for _, k := range []string{a, b} {
		s.types[k] = &ptype{name: k, key: k, kw: nameKey([]byte(k)), kind: tkState}
	}
	for range 3 {
		for _, k := range []string{a, b} {
			if got := s.typeOf([]byte(k)); got == nil || got.key != k {
				t.Fatalf("typeOf(%q) = %v", k, got)
			}
		}
	}
	e := s.typeCache[keySlot(nameKey([]byte(a)), typeCacheBits)]
	if e[0] == nil || e[1] == nil || e[0].key != b || e[1].key != a {
		t.Errorf("bucket of %q and %q holds %v, %v: want both, the latest first", a, b, e[0], e[1])
	}
}

// sameSlot returns the first two names prefix0, prefix1, ... whose keys
// share a slot of a cache of 2^bits slots (or buckets).
func sameSlot(prefix string, bits uint) (string, string) {
	seen := map[uint64]string{}
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		slot := keySlot(nameKey([]byte(k)), bits)
		if o, ok := seen[slot]; ok {
			return o, k
		}
		seen[slot] = k
	}
}
