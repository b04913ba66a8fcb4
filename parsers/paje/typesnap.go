package paje

// The goroutines that decode lines ahead of the simulator (decode) also
// find a line's type and the name of its value, in a typeSnap: an
// immutable copy of the simulator's types and entity value aliases. The
// simulator takes what was found only if that snapshot is still its
// current one: a definition (a value alias may be redefined, a type or a
// value defined later in the same chunk) makes it current no more at
// once, and the next snapshot is made once the chunk is resolved. Then it
// is what its own lookups would find, without them: a hash-indexed cache
// that two hot keys can share, a string comparison, the alias table.
// Only a parser that reads chunks makes snapshots (Parser.snapTypes).

// typeSnap is an immutable copy of a simulator's types and value aliases.
type typeSnap struct {
	types *nameTab[*ptype]
	// values[t.id] maps the keys (alias or name) of type t's entity
	// values to their name; nil when t has none.
	values []*nameTab[string]
}

// maxSnapNames bounds the types and values a snapshot copies (real traces
// have a few hundred): past it the simulator does its own lookups.
const maxSnapNames = 4096

// defined is called after a type or value definition: the snapshot is
// current no more.
func (s *sim) defined() {
	s.tsnap = nil
	s.tsnapStale = true
}

// publishTypes makes a snapshot of the types and values, if they changed
// since the last one, and publishes it.
func (s *sim) publishTypes() {
	if !s.tsnapStale {
		return
	}
	s.tsnapStale = false
	n := len(s.types)
	for _, t := range s.types {
		n += len(t.values)
	}
	if n > maxSnapNames {
		s.tsnapPub.Store(nil)
		return
	}
	snap := &typeSnap{types: newNameTab[*ptype](len(s.types)), values: make([]*nameTab[string], s.ntypes)}
	for key, t := range s.types {
		snap.types.put(key, t)
		if len(t.values) > 0 {
			vt := newNameTab[string](len(t.values))
			for key, v := range t.values {
				vt.put(key, v[1])
			}
			snap.values[t.id] = vt
		}
	}
	s.tsnap = snap
	s.tsnapPub.Store(snap)
}

// nameTab is an immutable hash table of names (open addressing, keyed by
// hashBytes), filled before it is published.
type nameTab[V any] struct {
	slots []nameSlot[V]
	mask  uint32
}

type nameSlot[V any] struct {
	key  string
	hash uint32
	used bool
	val  V
}

// newNameTab returns a table for up to n names, at most half full.
func newNameTab[V any](n int) *nameTab[V] {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return &nameTab[V]{slots: make([]nameSlot[V], size), mask: uint32(size - 1)}
}

func (t *nameTab[V]) put(key string, v V) {
	h := hashBytes([]byte(key))
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if sl := &t.slots[i]; !sl.used || sl.key == key {
			*sl = nameSlot[V]{key: key, hash: h, used: true, val: v}
			return
		}
	}
}

// get returns the entry of b, of hash h, or nil.
func (t *nameTab[V]) get(b []byte, h uint32) *V {
	if t == nil {
		return nil
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if !sl.used {
			return nil
		}
		if sl.hash == h && sl.key == string(b) {
			return &sl.val
		}
	}
}

// decodeType finds the type and value name of an event line in snap
// (decode, any goroutine): toks are the fields after the id, dec has
// their hashes.
func (dec *decoded) decodeType(d *eventDef, toks []token, snap *typeSnap) {
	if snap == nil {
		return
	}
	switch d.kind {
	case evNewEvent, evSetState, evPushState, evPopState, evResetState,
		evSetVariable, evAddVariable, evSubVariable, evStartLink, evEndLink:
	default:
		return
	}
	t := snap.types.get(toks[d.idx[fType]].b, dec.ht)
	if t == nil {
		return
	}
	dec.tsnap, dec.typ = snap, *t
	switch d.kind {
	case evNewEvent, evSetState, evPushState, evStartLink, evEndLink:
		if id := (*t).id; id < len(snap.values) {
			dec.vname = snap.values[id].get(toks[d.idx[fValue]].b, dec.hv)
		}
	}
}

// lineType is the type of the current line's Type field b, of kind want:
// the one decoded if the snapshot is current, else looked up.
func (s *sim) lineType(b []byte, want typeKind) (*ptype, *simError) {
	if pre := s.pre; pre.typ != nil && pre.tsnap == s.tsnap {
		if t := pre.typ; t.kind == want {
			return t, nil
		}
	}
	return s.lookupTypeH(b, s.pre.ht, want)
}

// lineValue is the name of the current line's Value field b, of type t:
// decoded if the snapshot is current (the alias's name, or b itself),
// else looked up.
func (s *sim) lineValue(t *ptype, b []byte) string {
	if pre := s.pre; pre.typ == t && pre.tsnap == s.tsnap {
		if pre.vname != nil {
			return *pre.vname
		}
		return s.strs.getH(b, pre.hv)
	}
	return s.valueH(t, b, s.pre.hv)
}
