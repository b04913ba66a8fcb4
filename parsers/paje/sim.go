package paje

import (
	"math"
	"sort"
	"strconv"
	"unsafe"

	"github.com/tracecast/tracecast"
)

type typeKind uint8

const (
	tkContainer typeKind = iota
	tkState
	tkEvent
	tkVariable
	tkLink
)

var typeKindNames = [...]string{"container", "state", "event", "variable", "link"}

// ptype is a Paje type (container, state, event, variable or link type).
type ptype struct {
	name string
	key  string // alias, or name when there is no alias
	kw   uint64 // nameKey of key
	// id numbers the types densely: it indexes container.slots.
	id     int
	kind   typeKind
	parent *ptype
	// values maps an entity value's alias (or name) to itself and its
	// name; vcache is a direct-mapped cache in front of it (value),
	// which also keeps values that are not aliases.
	values map[string][2]string
	vcache *[1 << vcacheBits]vcEntry // allocated with the first value alias: most types have none
	// start and end are a link type's endpoint container types.
	start, end *ptype
}

// The sizes of the simulator's type and container caches: buckets, in
// bits. A bucket holds two entries, the latest found first: with one, two
// names that shared a slot and alternated missed at every line (WS and gf
// on the 41 MB trace: 76 k map lookups).
const (
	typeCacheBits = 5 // 32 buckets of two: 64 types
	contCacheBits = 7 // 256 containers
)

// container is a live container instance.
type container struct {
	name   string
	key    string // alias, or name when there is no alias
	kw     uint64 // nameKey of key
	typ    *ptype
	parent *container
	start  float64
	// slots[t.id] is the container's slot of type t, nil if unused, for
	// the first denseSlots type ids; more holds those of the others. A
	// slice indexed by every id made each container that used a type
	// defined late cost a pointer per type defined before it (500k
	// variable types: 4 MB a container).
	slots []*slot
	more  map[int]*slot
	extra []tracecast.Field
	// live is the container's index in sim.live, -1 once destroyed.
	live int
	// last is the latest event time on the container: it may not be
	// destroyed before that.
	last float64
	// slotOrder and children keep creation order, so that output is
	// deterministic.
	slotOrder []*slot
	children  []*container
	childIdx  int // index in parent.children
}

// slot is the state of one (container, type) pair.
type slot struct {
	// last is the latest time seen on this pair: pajeng refuses an event
	// that goes back in time on its own (container, type).
	last float64
	// stack holds the open states, bottom first.
	stack []openState
	// hasVar, varStart and varValue describe a variable's current piece.
	hasVar   bool
	varStart float64
	varValue float64
	varExtra []tracecast.Field // -u: the user-defined fields of the piece
	// links holds the links of this (container, link type) waiting for
	// their other end, by key.
	links map[string]*pendingLink
	// vbuf holds variable changes not applied yet, in time order, and
	// vApplied the time of the last applied one.
	vbuf     []varChange
	vhead    int // vbuf[:vhead] is applied
	vApplied float64
	// linkStart and linkEnd are the last completed link's times: links must
	// complete in time order.
	linkStart, linkEnd float64
	compat             compatSlot
	// c and t are the slot's container and type.
	c *container
	t *ptype
}

type openState struct {
	start float64
	value string
	extra []tracecast.Field
	seq   uint64
}

type pendingLink struct {
	key              string // its key in slot.links, Entity.Key once complete
	hasStart, hasEnd bool
	start, end       float64
	value            string
	startC, endC     string
	extra            []tracecast.Field
	line             int64
}

// sim resolves definitions and timed events into entities, like pajeng's
// PajeSimulator, but emits each entity as soon as it is complete.
type sim struct {
	opts       *Options
	types      map[string]*ptype
	containers map[string]*container
	live       []*container
	root       *container
	open       int // open states + pending links, bounded by MaxOpenStates
	endTime    float64
	anyTime    bool
	out        []tracecast.Entity
	dropped    tracecast.Entity // where emit puts what pj_dump does not print
	ntypes     int
	nvalues    int // entity values defined; with ntypes, bounded by MaxTypes
	strs       *strTable
	// typeCache and contCache are two-way caches in front of types
	// and containers, by keySlot of the key's nameKey.
	typeCache [1 << typeCacheBits][2]*ptype
	contCache [1 << contCacheBits][2]*container
	// freeLinks are pending links to reuse.
	freeLinks []*pendingLink
	// fieldSlab is where user-defined fields are carved from.
	fieldSlab []tracecast.Field
	// extSlab is where entities' out-of-line fields (Entity.Ext) are
	// carved from.
	extSlab []tracecast.EntityExt
	// pre is what was decoded ahead of the parser for the current line
	// (the parser's, shared).
	pre *decoded
	// destroyed remembers destroyed containers' names by key: pj_dump
	// ignores events sent to them and still accepts them as link ends.
	destroyed map[string]string
	// varExtras holds, by line, the user-defined fields of variable
	// changes not applied yet (-u): at most one per buffered change.
	varExtras map[int64][]tracecast.Field
	// lastLine is the time of the last event line processed (pj_dump's end
	// of trace, which is not the latest time when the input is unsorted).
	lastLine float64
	anyLine  bool
	// seq numbers entities in pj_dump's insertion order (a state when it
	// is pushed, a link when it completes).
	seq uint64
	// What the pj_dump window holds back (see compat.go).
	maxLine     float64
	quirkWindow float64
	outMeta     []entMeta
	outMax      float64 // the latest start in out, containers aside (-Inf when none)
	// drain, when set, is called when out grows large inside one call (at
	// the end of the trace every container closes at once), so output
	// leaves in batches instead of piling up.
	drain func() error
	// halted: drain failed (the output was cancelled or failed, for good):
	// the end of the trace stops ending containers, which may take long
	// (a million containers, two million open states), instead of going
	// on for nothing while the pipeline waits for it to stop.
	halted bool
	// Variable reordering (vars.go).
	horizon     float64
	unit        string // the trace's time unit, for messages
	late        int64
	buffered    int
	maxBuffered int
	vslots      []*slot
	vsince      int
	// vfree holds the variable buffers outgrown by their slot, by
	// capacity (vfree[k] have 2^k changes), for another slot to grow
	// into; nil until a buffer is outgrown (a sim per open stream).
	vfree       [][][]varChange
	negSlots    []*slot
	releasedMax float64
	// end is the end time of the trace, once finished.
	endAt float64
}

func newSim(opts *Options) *sim {
	rootType := &ptype{name: "0", key: "0", kw: nameKey([]byte("0")), kind: tkContainer}
	s := &sim{
		opts:       opts,
		types:      map[string]*ptype{"0": rootType},
		ntypes:     1,
		containers: make(map[string]*container),
		destroyed:  make(map[string]string),
		outMax:     math.Inf(-1),
		// Nothing let go early yet (compat.go): an input without events
		// must not look like an inexact pj_dump window.
		releasedMax: math.Inf(-1),
	}
	if opts.shared != nil {
		s.strs = opts.shared.strs
	} else {
		s.strs = &strTable{}
	}
	s.root = &container{name: "0", key: "0", kw: rootType.kw, typ: rootType}
	s.containers["0"] = s.root
	s.live = append(s.live, s.root)
	return s
}

// errf is a processing error of the current line.
type simError struct {
	reason string
	kind   string
	line   int64 // when not the line being processed
}

func fail(kind, reason string) *simError { return &simError{kind: kind, reason: reason} }

// typeOf returns the type of key b, or nil.
func (s *sim) typeOf(b []byte) *ptype { return s.typeOfH(b, nameKey(b)) }

// typeOfH is typeOf for a key b of name key k (nameKey).
func (s *sim) typeOfH(b []byte, k uint64) *ptype {
	e := &s.typeCache[keySlot(k, typeCacheBits)]
	for _, t := range e {
		if t != nil && keyIs(t.key, t.kw, b, k) {
			return t // types are never redefined nor forgotten
		}
	}
	t := s.types[string(b)]
	if t != nil {
		e[0], e[1] = t, e[0]
	}
	return t
}

// containerOf returns the live container of key b, or nil.
func (s *sim) containerOf(b []byte) *container { return s.containerOfH(b, nameKey(b)) }

// containerOfH is containerOf for a key b of name key k (nameKey).
func (s *sim) containerOfH(b []byte, k uint64) *container {
	e := &s.contCache[keySlot(k, contCacheBits)]
	if c := e[0]; c != nil && c.live >= 0 && keyIs(c.key, c.kw, b, k) {
		return c // keys are unique among live containers
	}
	return s.containerMiss(b, k)
}

// containerMiss is containerOfH past its bucket's first entry (out of
// line: event has the first entry's test written out).
//
//go:noinline
func (s *sim) containerMiss(b []byte, k uint64) *container {
	e := &s.contCache[keySlot(k, contCacheBits)]
	if c := e[1]; c != nil && c.live >= 0 && keyIs(c.key, c.kw, b, k) {
		return c
	}
	c := s.containers[string(b)]
	if c != nil {
		e[0], e[1] = c, e[0]
	}
	return c
}

func (s *sim) lookupType(b []byte, want typeKind) (*ptype, *simError) {
	return s.lookupTypeH(b, nameKey(b), want)
}

// lookupTypeH is lookupType for a key b of name key k (nameKey). (event
// tries typeCache itself first.)
func (s *sim) lookupTypeH(b []byte, k uint64, want typeKind) (*ptype, *simError) {
	t := s.typeOfH(b, k)
	if t == nil {
		return nil, fail("unknown type", "unknown type "+quote(string(b)))
	}
	if t.kind != want {
		return nil, fail("wrong type", "type "+quote(t.name)+" is a "+typeKindNames[t.kind]+" type, not a "+typeKindNames[want]+" type")
	}
	return t, nil
}

func (s *sim) lookupContainer(b []byte) (*container, *simError) {
	c := s.containerOf(b)
	if c == nil {
		return nil, fail("unknown container", "unknown container "+quote(string(b)))
	}
	return c, nil
}

// define handles the six PajeDefine* events.
func (s *sim) define(d *eventDef, toks []token, extra []tracecast.Field) *simError {
	get := func(f field) []byte {
		if i := d.idx[f]; i >= 0 {
			return toks[i].b
		}
		return nil
	}
	name, alias := string(get(fName)), string(get(fAlias))
	key := alias
	if key == "" {
		key = name
	}
	if name == "0" || alias == "0" {
		return fail("definition", "the type name '0' is reserved")
	}
	parent := s.types[string(get(fType))]
	if parent == nil {
		return fail("unknown type", "unknown type "+quote(string(get(fType))))
	}
	if d.kind == evDefineEntityValue {
		if parent.kind == tkContainer || parent.kind == tkVariable {
			return fail("definition", "entity values are for state, event and link types; "+quote(parent.name)+" is a "+typeKindNames[parent.kind]+" type")
		}
		if parent.values == nil {
			parent.values = make(map[string][2]string)
		}
		if _, redefined := parent.values[key]; !redefined {
			if err := s.definable(); err != nil {
				return err
			}
			s.nvalues++
		}
		parent.values[key] = [2]string{key, name}
		// An alias may take over a value's name.
		if parent.vcache == nil {
			parent.vcache = new([1 << vcacheBits]vcEntry)
		} else {
			clear(parent.vcache[:])
		}
		return nil
	}
	if parent.kind != tkContainer {
		return fail("definition", "type "+quote(parent.name)+" is not a container type")
	}
	if _, dup := s.types[key]; dup {
		return fail("definition", "type "+quote(key)+" already defined")
	}
	if err := s.definable(); err != nil {
		return err
	}
	t := &ptype{name: name, key: key, kw: nameKey([]byte(key)), id: s.ntypes, parent: parent}
	switch d.kind {
	case evDefineContainerType:
		t.kind = tkContainer
	case evDefineStateType:
		t.kind = tkState
	case evDefineEventType:
		t.kind = tkEvent
	case evDefineVariableType:
		t.kind = tkVariable
	case evDefineLinkType:
		t.kind = tkLink
		var err *simError
		if t.start, err = s.lookupType(get(fStartContainerType), tkContainer); err != nil {
			return err
		}
		if t.end, err = s.lookupType(get(fEndContainerType), tkContainer); err != nil {
			return err
		}
	}
	s.types[key] = t
	s.ntypes++
	return nil
}

// definable fails once the trace has defined MaxTypes types and entity
// values (without the bound, 3 million entity values took 850 MB).
func (s *sim) definable() *simError {
	if s.ntypes+s.nvalues >= s.opts.MaxTypes {
		return fail("limit", "more than "+strconv.Itoa(s.opts.MaxTypes)+" types and entity values (raise --max-types)")
	}
	return nil
}

// value resolves an entity value alias to its name; any other value is
// its own name (pajeng creates it on first use).
func (s *sim) value(t *ptype, b []byte) string {
	if v, ok := t.cachedValue(b); ok {
		return v
	}
	return s.valueSlow(t, b)
}

// cachedValue is value when the type's cache has b: most values of a
// state type are a few aliases, and a few names that are not (StarPU's
// codelets), and a direct-mapped cache by name key (nameKey) answers
// before the map's hash, without comparing strings for values of up to
// eight bytes. vcache exists once the type has an alias. (event has it
// written out.)
func (t *ptype) cachedValue(b []byte) (string, bool) {
	if t.vcache == nil {
		return "", false
	}
	k := nameKey(b)
	e := &t.vcache[keySlot(k, vcacheBits)]
	return e.v[1], keyIs(e.v[0], e.kw, b, k) && e.v[1] != ""
}

// vcEntry is an entry of a type's value cache: an alias (or name) and its
// name, and the alias's nameKey.
type vcEntry struct {
	v  [2]string
	kw uint64
}

// vcacheBits is the size of a type's value cache, in bits.
const vcacheBits = 5

// valueSlow is value past the cache.
func (s *sim) valueSlow(t *ptype, b []byte) string {
	if len(t.values) > 0 && t.vcache != nil && len(b) > 0 {
		k := nameKey(b)
		e := &t.vcache[keySlot(k, vcacheBits)]
		if v, ok := t.values[string(b)]; ok {
			*e = vcEntry{v, k}
			return v[1]
		}
		v := s.strs.get(b)
		*e = vcEntry{[2]string{v, v}, k}
		return v
	}
	return s.strs.get(b)
}

// denseSlots: the type ids below it index container.slots.
const denseSlots = 64

// slot returns c's slot for type t, made on first use. (event tries
// c.slots itself first.)
func (s *sim) slot(c *container, t *ptype) *slot {
	if t.id < len(c.slots) {
		if sl := c.slots[t.id]; sl != nil {
			return sl
		}
	} else if t.id >= denseSlots {
		if sl := c.more[t.id]; sl != nil {
			return sl
		}
	}
	sl := &slot{last: math.Inf(-1), linkStart: math.Inf(-1), linkEnd: math.Inf(-1), vApplied: math.Inf(-1), c: c, t: t}
	if t.id < denseSlots {
		if t.id >= len(c.slots) {
			c.slots = append(c.slots, make([]*slot, t.id+1-len(c.slots))...)
		}
		c.slots[t.id] = sl
	} else {
		if c.more == nil {
			c.more = map[int]*slot{}
		}
		c.more[t.id] = sl
	}
	c.slotOrder = append(c.slotOrder, sl)
	return sl
}

func (s *sim) see(t float64) {
	if !s.anyTime || t > s.endTime {
		s.endTime = t
	}
	s.anyTime = true
}

// ordered applies pajeng's time-order rule on a (container, type) pair.
// (Small enough to inline, as the other per-line steps' fast paths are:
// their error paths are functions of their own.)
func (s *sim) ordered(sl *slot, c *container, t *ptype, now float64) *simError {
	if now < sl.last {
		return s.orderError(sl, c, t, now)
	}
	sl.last = now
	return nil
}

func (s *sim) orderError(sl *slot, c *container, t *ptype, now float64) *simError {
	return fail("time order", "not time-ordered: time "+fmtG(now)+" is before "+fmtG(sl.last)+
		" on container "+quote(c.name)+", type "+quote(t.name)+s.orderHint(t))
}

func (s *sim) orderHint(t *ptype) string {
	switch {
	case t == nil || t.kind != tkVariable:
		// The reorder buffer holds variable samples only.
		return " (states, events, links and container ends must be in time order on each container and type, as pj_dump requires: sort the trace by time first, e.g. with StarPU's starpu_paje_sort)"
	case s.horizon <= 0:
		return " (the reorder buffer is off: give a reorder horizon, e.g. --reorder-horizon 3s, to put late variable samples back in order)"
	}
	h := fmtG(s.horizon)
	if s.unit != "" {
		h += " " + s.unit
	}
	return " (more than the reorder horizon, " + h + ", late: raise --reorder-horizon)"
}

// typeNames quotes two different types' names for an error, with their
// aliases when the names are the same (SimGrid's grouped traces define
// several container types of one name).
func typeNames(a, b *ptype) (string, string) {
	if a == nil || b == nil || a.name != b.name {
		return quoteType(a), quoteType(b)
	}
	return quote(a.name) + " (alias " + quote(a.key) + ")", quote(b.name) + " (alias " + quote(b.key) + ")"
}

func quoteType(t *ptype) string {
	if t == nil {
		return "none"
	}
	return quote(t.name)
}

func fmtG(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// event handles one timed or container event; toks excludes the id.
func (s *sim) event(d *eventDef, toks []token, now float64, line int64) *simError {
	get := func(f field) []byte {
		if i := d.idx[f]; i >= 0 {
			return toks[i].b
		}
		return nil
	}
	// pj_dump's end of trace is the time of the last event line, 0 for
	// one without a time.
	s.lastLine, s.anyLine = now, true
	if now > s.maxLine {
		s.maxLine = now
	}
	var extra []tracecast.Field
	if s.opts.UserDefined && len(d.extras) > 0 {
		extra = s.fields(len(d.extras))
		for i, x := range d.extras {
			extra[i] = tracecast.Field{Name: x.name, Value: s.strs.get(toks[x.col].b)}
		}
	}
	switch d.kind {
	case evDefineContainerType, evDefineStateType, evDefineEventType,
		evDefineVariableType, evDefineLinkType, evDefineEntityValue:
		return s.define(d, toks, extra)
	case evTraceFile:
		// Multi-file traces: pj_dump does not follow them either.
		_, err := s.lookupContainer(get(fContainer))
		return err
	case evCreateContainer:
		return s.create(get, now, extra)
	case evDestroyContainer:
		return s.destroy(get, now)
	}

	// Every event left has a Container and a Type: obligatory fields,
	// which the header checks before it accepts a definition (read
	// without get's test for a missing one). Their name keys come with the
	// line (decoded.hashFields).
	cb, tb := toks[d.idx[fContainer]].b, toks[d.idx[fType]].b
	// containerOfH, its cache hit written out.
	c := s.contCache[keySlot(s.pre.hc, contCacheBits)][0]
	if c == nil || c.live < 0 || !keyIs(c.key, c.kw, cb, s.pre.hc) {
		c = s.containerMiss(cb, s.pre.hc)
	}
	if c == nil {
		if _, gone := s.destroyed[string(cb)]; gone {
			return nil // pj_dump ignores events sent to destroyed containers
		}
		return fail("unknown container", "unknown container "+quote(string(cb)))
	}
	var want typeKind
	switch d.kind {
	case evNewEvent:
		want = tkEvent
	case evSetState, evPushState, evPopState, evResetState:
		want = tkState
	case evSetVariable, evAddVariable, evSubVariable:
		want = tkVariable
	case evStartLink, evEndLink:
		want = tkLink
	}
	// lookupTypeH and slot, their fast paths written out (see ordered).
	te := &s.typeCache[keySlot(s.pre.ht, typeCacheBits)]
	t := te[0]
	if t == nil || t.kind != want || !keyIs(t.key, t.kw, tb, s.pre.ht) {
		if t = te[1]; t == nil || t.kind != want || !keyIs(t.key, t.kw, tb, s.pre.ht) {
			var err *simError
			if t, err = s.lookupTypeH(tb, s.pre.ht, want); err != nil {
				return err
			}
		}
	}
	if t.parent != c.typ {
		parent, ctyp := typeNames(t.parent, c.typ)
		return fail("wrong type", "type "+quote(t.name)+" is a child of container type "+parent+", not of "+ctyp+" (container "+quote(c.name)+")")
	}
	var sl *slot
	if t.id < len(c.slots) {
		sl = c.slots[t.id]
	}
	if sl == nil {
		sl = s.slot(c, t)
	}
	if want != tkLink && (want != tkVariable || s.horizon <= 0) {
		if err := s.ordered(sl, c, t, now); err != nil {
			return err
		}
	}
	if now > c.last {
		c.last = now
	}
	s.see(now)

	switch d.kind {
	case evNewEvent:
		s.seq++ // its place in pj_dump's insertion order
		put(s.emit(sl, now), tracecast.NatureEvent, c.name, t.name, now, now, 0, s.value(t, get(fValue)), 0, s.extra(extra))
	case evSetState, evPushState:
		if d.kind == evSetState {
			s.closeStates(c, t, sl, now)
		}
		vb := toks[d.idx[fValue]].b // obligatory too
		// value, cachedValue written out.
		v, ok := "", false
		if vc := t.vcache; vc != nil {
			k := nameKey(vb)
			e := &vc[keySlot(k, vcacheBits)]
			v, ok = e.v[1], keyIs(e.v[0], e.kw, vb, k) && e.v[1] != ""
		}
		if !ok {
			v = s.valueSlow(t, vb)
		}
		// Push the state, filled in place (not appended as a
		// literal, see emit).
		if s.open >= s.opts.MaxOpenStates {
			return s.openLimit()
		}
		s.open++
		s.seq++
		n := len(sl.stack)
		if n == cap(sl.stack) {
			sl.stack = append(sl.stack, openState{})
		} else {
			sl.stack = sl.stack[:n+1]
		}
		o := &sl.stack[n]
		o.start, o.value, o.extra, o.seq = now, v, extra, s.seq
		return nil
	case evPopState:
		if len(sl.stack) == 0 {
			return fail("pop on empty stack", "illegal pop of state type "+quote(t.name)+" on container "+quote(c.name)+": no state is open")
		}
		if extra != nil { // pj_dump adds the pop's user-defined fields to the state's
			top := &sl.stack[len(sl.stack)-1]
			top.extra = s.joinFields(top.extra, extra)
		}
		s.closeTop(c, t, sl, now)
	case evResetState:
		s.closeStates(c, t, sl, now)
	case evSetVariable, evAddVariable, evSubVariable:
		v, ok := s.pre.val, s.pre.valOK
		if s.pre.def == nil {
			v, ok = parseFloat(get(fValue))
		}
		if !ok {
			return fail("bad number", "bad variable value "+quote(string(get(fValue))))
		}
		// pajeng reads variable values as C floats, then computes in double.
		// A value beyond a float's range is an error, not an infinity.
		if v = float64(float32(v)); math.IsInf(v, 0) {
			return fail("bad number", "variable value "+quote(string(get(fValue)))+" out of range (pj_dump reads values as C floats, at most 3.4e38 in magnitude)")
		}
		if extra != nil {
			// Kept aside, by line, until the change is applied: a
			// varChange stays 24 bytes.
			if s.varExtras == nil {
				s.varExtras = make(map[int64][]tracecast.Field)
			}
			s.varExtras[line] = extra
		}
		if s.horizon <= 0 {
			return s.applyVar(c, t, sl, newVarChange(now, v, d.kind, line))
		}
		return s.bufferVar(c, t, sl, newVarChange(now, v, d.kind, line))
	case evStartLink, evEndLink:
		return s.link(d, c, t, sl, get, now, line, extra)
	}
	return nil
}

func (s *sim) create(get func(field) []byte, now float64, extra []tracecast.Field) *simError {
	t := s.typeOf(get(fType))
	if t == nil || t.kind != tkContainer {
		return fail("unknown type", "unknown container type "+quote(string(get(fType))))
	}
	parent := s.containerOf(get(fContainer))
	if parent == nil {
		if _, gone := s.destroyed[string(get(fContainer))]; gone {
			// pj_dump creates it in the destroyed parent; we cannot,
			// the parent is gone: count it as an event for a
			// destroyed container, which pj_dump ignores.
			return nil
		}
		return fail("unknown container", "unknown container "+quote(string(get(fContainer))))
	}
	if t.parent != parent.typ {
		return fail("wrong type", "container type "+quote(t.name)+" is not a child of "+quote(parent.typ.name)+" (parent container "+quote(parent.name)+")")
	}
	name, alias := get(fName), get(fAlias)
	key := alias
	if len(key) == 0 {
		key = name
	}
	if string(key) == "0" {
		return fail("definition", "the container name '0' is reserved")
	}
	if _, dup := s.containers[string(key)]; dup {
		return fail("definition", "container "+quote(string(key))+" already exists")
	}
	if len(s.live) >= s.opts.MaxContainers {
		return fail("limit", "more than "+strconv.Itoa(s.opts.MaxContainers)+" live containers (raise --max-containers)")
	}
	c := &container{name: string(name), key: string(key), kw: nameKey(key), typ: t, parent: parent, start: now, last: now, extra: extra, live: len(s.live)}
	delete(s.destroyed, c.key)
	s.containers[c.key] = c
	s.live = append(s.live, c)
	c.childIdx = len(parent.children)
	parent.children = append(parent.children, c)
	s.see(now)
	return nil
}

func (s *sim) destroy(get func(field) []byte, now float64) *simError {
	c := s.containerOf(get(fName))
	if c == nil {
		if _, gone := s.destroyed[string(get(fName))]; gone {
			return nil // destroyed twice: pj_dump ignores the second
		}
		return fail("unknown container", "unknown container "+quote(string(get(fName))))
	}
	t, err := s.lookupType(get(fType), tkContainer)
	if err != nil {
		return err
	}
	if c.typ != t {
		return fail("wrong type", "container "+quote(c.name)+" is of type "+quote(c.typ.name)+", not "+quote(t.name))
	}
	if now < c.last {
		return fail("time order", "container "+quote(c.name)+" destroyed at "+fmtG(now)+", before its last event at "+fmtG(c.last)+s.orderHint(nil))
	}
	s.see(now)
	if p := c.parent; p != nil {
		last := p.children[len(p.children)-1]
		p.children[c.childIdx] = last
		last.childIdx = c.childIdx
		p.children = p.children[:len(p.children)-1]
	}
	return s.destroyTree(c, now, false)
}

// destroyTree ends c and its descendants at time now and forgets them:
// memory follows the live containers.
//
// It walks the tree with a stack of its own, children first in creation
// order: recursion as deep as the tree (a million nested containers, as
// many as MaxContainers allows) would overflow the goroutine's stack, which
// is fatal, not an error.
//
// At the end of the trace (final) nothing can refer to a container again:
// the maps that find live and destroyed containers are left as they are
// (a million containers cost two million map updates for nothing).
func (s *sim) destroyTree(root *container, now float64, final bool) *simError {
	var first *simError
	type frame struct {
		c    *container
		next int // the next child to destroy
	}
	stack := []frame{{c: root}}
	for len(stack) > 0 {
		if final && s.halted {
			return first // the caller's next send returns why
		}
		f := &stack[len(stack)-1]
		if f.next < len(f.c.children) {
			child := f.c.children[f.next]
			f.next++
			stack = append(stack, frame{c: child})
			continue
		}
		c := f.c
		stack = stack[:len(stack)-1]
		if err := s.end(c, now); err != nil && first == nil {
			first = err
		}
		last := s.live[len(s.live)-1]
		s.live[c.live] = last
		last.live = c.live
		s.live = s.live[:len(s.live)-1]
		c.live = -1
		if final {
			continue
		}
		delete(s.containers, c.key)
		if len(s.destroyed) < s.opts.MaxContainers {
			s.destroyed[c.key] = c.name
		}
	}
	return first
}

// end closes everything still open in c at time now and emits c itself.
func (s *sim) end(c *container, now float64) *simError {
	var incomplete *simError
	for _, sl := range c.slotOrder {
		t := sl.t
		if err := s.flushVars(c, t, sl, math.Inf(1)); err != nil && incomplete == nil {
			incomplete = err
		}
		s.closeStates(c, t, sl, now)
		s.varPiece(c, t, sl, now)
		sl.hasVar = false
		keys := make([]string, 0, len(sl.links))
		for key := range sl.links {
			keys = append(keys, key)
		}
		sort.Strings(keys) // a deterministic first error
		for _, key := range keys {
			l := sl.links[key]
			s.open--
			delete(sl.links, key)
			if !s.opts.IgnoreIncompleteLinks && incomplete == nil {
				missing := "start"
				if l.hasStart {
					missing = "end"
				}
				incomplete = fail("incomplete link", "link "+quote(key)+" of type "+quote(t.name)+" in container "+quote(c.name)+
					" (line "+strconv.FormatInt(l.line, 10)+") has no "+missing+" (--ignore-incomplete-links drops it)")
			}
			s.freeLink(l)
		}
	}
	parent := "0"
	if c.parent != nil {
		parent = c.parent.name
	}
	put(s.next(), tracecast.NatureContainer, parent, c.typ.name, c.start, now, 0, c.name, 0, s.extra(c.extra))
	if s.opts.PjdumpQuirks {
		s.outMeta = append(s.outMeta, entMeta{}) // containers are never filtered
	}
	if s.drain != nil && len(s.out) >= BatchSize && s.drain() != nil {
		s.halted = true
	}
	return incomplete
}

func (s *sim) openLimit() *simError {
	return fail("limit", "more than "+strconv.Itoa(s.opts.MaxOpenStates)+" open states and links (raise --max-open-states)")
}

func (s *sim) closeTop(c *container, t *ptype, sl *slot, now float64) {
	top := len(sl.stack) - 1
	o := &sl.stack[top] // read before the next push reuses it
	sl.stack = sl.stack[:top]
	s.open--
	seq := s.seq
	s.seq = o.seq // entities keep their creation order for the pj_dump filter
	var e *tracecast.Entity
	if s.opts.PjdumpQuirks && o.start >= 0 {
		// emit's common case, written out: a call less a state.
		s.outMeta = append(s.outMeta, entMeta{sl: sl, seq: s.seq})
		if o.start > s.outMax {
			s.outMax = o.start
		}
		e = s.next()
	} else {
		e = s.emit(sl, o.start)
	}
	put(e, tracecast.NatureState, c.name, t.name, o.start, now, top, o.value, 0, s.extra(o.extra))
	s.seq = seq
}

func (s *sim) closeStates(c *container, t *ptype, sl *slot, now float64) {
	for len(sl.stack) > 0 {
		s.closeTop(c, t, sl, now)
	}
}

func (s *sim) varPiece(c *container, t *ptype, sl *slot, now float64) {
	if !sl.hasVar {
		return
	}
	s.seq++ // pieces complete in the order they began: pj_dump's order
	put(s.emit(sl, sl.varStart), tracecast.NatureVariable, c.name, t.name, sl.varStart, now, 0, "", sl.varValue, s.extra(sl.varExtra))
}

func (s *sim) link(d *eventDef, c *container, t *ptype, sl *slot, get func(field) []byte, now float64, line int64, extra []tracecast.Field) *simError {
	start := d.kind == evStartLink
	endpoint := fEndContainer
	want := t.end
	if start {
		endpoint, want = fStartContainer, t.start
	}
	var ecName string
	if ec := s.containerOf(get(endpoint)); ec != nil {
		if ec.typ != want {
			got, w := typeNames(ec.typ, want)
			return fail("wrong type", "container "+quote(ec.name)+" is of type "+got+", link type "+quote(t.name)+" wants "+w)
		}
		ecName = ec.name
	} else if name, gone := s.destroyed[string(get(endpoint))]; gone {
		ecName = name
	} else {
		return fail("unknown container", "unknown container "+quote(string(get(endpoint))))
	}
	value := s.value(t, get(fValue))
	key := get(fKey)
	l := sl.links[string(key)]
	if l == nil {
		if s.open >= s.opts.MaxOpenStates {
			return fail("limit", "more than "+strconv.Itoa(s.opts.MaxOpenStates)+" open states and links (raise --max-open-states)")
		}
		if sl.links == nil {
			sl.links = make(map[string]*pendingLink)
		}
		l = s.newLink()
		l.key, l.value, l.line, l.extra = s.strs.slabbed(key), value, line, extra
		sl.links[l.key] = l
		s.open++
	} else {
		if (start && l.hasStart) || (!start && l.hasEnd) {
			return fail("link", "link key "+quote(string(key))+" of type "+quote(t.name)+" already has a "+map[bool]string{true: "start", false: "end"}[start])
		}
		if l.value != value {
			return fail("link", "link "+quote(string(key))+": value "+quote(value)+" differs from "+quote(l.value)+" at the other end")
		}
		// pj_dump keeps the first event's extra fields, then the second's.
		l.extra = s.joinFields(l.extra, extra)
	}
	if start {
		l.hasStart, l.start, l.startC = true, now, ecName
	} else {
		l.hasEnd, l.end, l.endC = true, now, ecName
	}
	if !l.hasStart || !l.hasEnd {
		return nil
	}
	// Links must complete in time order on their (container, type).
	if now < sl.linkStart || now < sl.linkEnd {
		return fail("time order", "not time-ordered: link "+quote(string(key))+" completes at "+fmtG(now)+
			", before the previous link of type "+quote(t.name)+" in container "+quote(c.name)+s.orderHint(t))
	}
	sl.linkStart, sl.linkEnd = l.start, l.end
	delete(sl.links, l.key)
	s.open--
	s.seq++
	put(s.emit(sl, l.start), tracecast.NatureLink, c.name, t.name, l.start, l.end, 0, l.value, 0,
		s.ext(tracecast.EntityExt{StartContainer: l.startC, EndContainer: l.endC, Key: l.key, Extra: l.extra}))
	s.freeLink(l)
	return nil
}

// fields returns n fields carved out of a shared slab (see strs.go): the
// user-defined fields of an entity, without an allocation per line.
// joinFields returns a's fields then b's (a itself when b is empty): the
// user-defined fields of an entity two events made, as pj_dump prints them.
func (s *sim) joinFields(a, b []tracecast.Field) []tracecast.Field {
	if len(b) == 0 {
		return a
	}
	both := s.fields(len(a) + len(b))
	copy(both[copy(both, a):], b)
	return both
}

func (s *sim) fields(n int) []tracecast.Field {
	if len(s.fieldSlab)+n > cap(s.fieldSlab) {
		s.fieldSlab = make([]tracecast.Field, 0, max(n, 4*slabBytes/int(unsafe.Sizeof(tracecast.Field{}))))
	}
	k := len(s.fieldSlab)
	s.fieldSlab = s.fieldSlab[:k+n]
	return s.fieldSlab[k : k+n : k+n]
}

// ext returns x carved out of a slab: an entity's out-of-line fields,
// without an allocation per link. A slab is never reused (entities handed
// downstream point into it): the collector takes it once none does.
func (s *sim) ext(x tracecast.EntityExt) *tracecast.EntityExt {
	if len(s.extSlab) == cap(s.extSlab) {
		s.extSlab = make([]tracecast.EntityExt, 0, slabBytes/int(unsafe.Sizeof(x)))
	}
	s.extSlab = append(s.extSlab, x)
	return &s.extSlab[len(s.extSlab)-1]
}

// extra is ext for an entity's user-defined fields: nil without any (the
// parser keeps them only with -u).
func (s *sim) extra(f []tracecast.Field) *tracecast.EntityExt {
	if f == nil {
		return nil
	}
	return s.ext(tracecast.EntityExt{Extra: f})
}

// newLink returns a zeroed pending link, reused if possible.
func (s *sim) newLink() *pendingLink {
	if n := len(s.freeLinks); n > 0 {
		l := s.freeLinks[n-1]
		s.freeLinks = s.freeLinks[:n-1]
		return l
	}
	return &pendingLink{}
}

// freeLink keeps l for reuse (a bounded number of them).
func (s *sim) freeLink(l *pendingLink) {
	if len(s.freeLinks) < 1024 {
		*l = pendingLink{}
		s.freeLinks = append(s.freeLinks, l)
	}
}

// finish closes every live container at the end of the trace, children
// before their parents.
func (s *sim) finish() *simError {
	end := s.endTime
	if s.opts.PjdumpQuirks {
		end = s.lastLine
		if !s.anyLine {
			end = -1
		}
	}
	var err *simError
	if s.root.live >= 0 {
		err = s.destroyTree(s.root, end, true)
	}
	s.endAt = end
	return err
}
