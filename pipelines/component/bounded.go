package component

// Bounded is a map of at most Max keys (0: DefaultBoundedMax): setting a
// new key beyond it forgets the key set longest ago. It holds per-run state
// that a long-running service keeps for runs that may never come back — the
// traces dropped and not ended, those whose messages are skipped — so that
// 100 000 distinct run ids over days cost a bounded amount of memory.
// Forgotten counts the keys forgotten for room.
type Bounded[V any] struct {
	Max       int
	Forgotten int
	m         map[string]boundedEntry[V]
	queue     []boundedKey // set order; stale entries skipped, compacted
	seq       uint64
}

type boundedEntry[V any] struct {
	v   V
	seq uint64
}

type boundedKey struct {
	k   string
	seq uint64
}

// DefaultBoundedMax is a Bounded's Max when 0.
const DefaultBoundedMax = 65536

// Get returns k's value.
func (b *Bounded[V]) Get(k string) (V, bool) {
	e, ok := b.m[k]
	return e.v, ok
}

// Has reports whether k is set.
func (b *Bounded[V]) Has(k string) bool {
	_, ok := b.m[k]
	return ok
}

// Set sets k to v; a new key beyond Max forgets the oldest one. Setting a
// key already there keeps its place.
func (b *Bounded[V]) Set(k string, v V) {
	if b.m == nil {
		b.m = map[string]boundedEntry[V]{}
	}
	if e, ok := b.m[k]; ok {
		e.v = v
		b.m[k] = e
		return
	}
	b.seq++
	b.m[k] = boundedEntry[V]{v, b.seq}
	b.queue = append(b.queue, boundedKey{k, b.seq})
	max := b.Max
	if max <= 0 {
		max = DefaultBoundedMax
	}
	for len(b.m) > max {
		old := b.queue[0]
		b.queue = b.queue[1:]
		if e, ok := b.m[old.k]; ok && e.seq == old.seq {
			delete(b.m, old.k)
			b.Forgotten++
		}
	}
	b.compact()
}

// Delete forgets k.
func (b *Bounded[V]) Delete(k string) {
	delete(b.m, k)
	b.compact()
}

// Clear forgets every key.
func (b *Bounded[V]) Clear() {
	clear(b.m)
	b.queue = b.queue[:0]
}

// Len is the number of keys.
func (b *Bounded[V]) Len() int { return len(b.m) }

// compact drops the stale entries of the queue once they outnumber the
// live ones, so that it stays within twice the map's size.
func (b *Bounded[V]) compact() {
	if len(b.queue) <= 2*len(b.m)+64 {
		return
	}
	q := b.queue[:0]
	for _, e := range b.queue {
		if cur, ok := b.m[e.k]; ok && cur.seq == e.seq {
			q = append(q, e)
		}
	}
	clear(b.queue[len(q):])
	b.queue = q
}
