package paje

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tracecast/tracecast/internal/lineerr"
)

// eventKind is one of the 19 standard Paje events.
type eventKind uint8

const (
	evDefineContainerType eventKind = iota
	evDefineStateType
	evDefineEventType
	evDefineVariableType
	evDefineLinkType
	evDefineEntityValue
	evCreateContainer
	evDestroyContainer
	evNewEvent
	evSetState
	evPushState
	evPopState
	evResetState
	evStartLink
	evEndLink
	evSetVariable
	evAddVariable
	evSubVariable
	evTraceFile
	numEventKinds
)

var eventNames = [numEventKinds]string{
	"PajeDefineContainerType", "PajeDefineStateType", "PajeDefineEventType",
	"PajeDefineVariableType", "PajeDefineLinkType", "PajeDefineEntityValue",
	"PajeCreateContainer", "PajeDestroyContainer", "PajeNewEvent",
	"PajeSetState", "PajePushState", "PajePopState", "PajeResetState",
	"PajeStartLink", "PajeEndLink", "PajeSetVariable", "PajeAddVariable",
	"PajeSubVariable", "PajeTraceFile",
}

// field is a standard Paje field name.
type field uint8

const (
	fTime field = iota
	fName
	fType
	fContainer
	fStartContainerType
	fEndContainerType
	fStartContainer
	fEndContainer
	fValue
	fKey
	fAlias
	fColor
	fLine
	fFile
	fFilename
	numFields
)

var fieldNames = [numFields]string{
	"Time", "Name", "Type", "Container", "StartContainerType", "EndContainerType",
	"StartContainer", "EndContainer", "Value", "Key", "Alias", "Color", "Line",
	"File", "Filename",
}

// deprecatedFields are the field names of Paje ≤1.1, accepted with NoStrict
// (pj_dump -n).
var deprecatedFields = map[string]field{
	"ContainerType":       fType,
	"EntityType":          fType,
	"SourceContainerType": fStartContainerType,
	"DestContainerType":   fEndContainerType,
	"SourceContainer":     fStartContainer,
	"DestContainer":       fEndContainer,
}

// obligatory lists, per event, the fields a definition must have (pajeng's
// PajeDefinitions.cc).
var obligatory = [numEventKinds][]field{
	evDefineContainerType: {fName, fType},
	evDefineStateType:     {fName, fType},
	evDefineEventType:     {fName, fType},
	evDefineVariableType:  {fName, fType},
	evDefineLinkType:      {fName, fType, fStartContainerType, fEndContainerType},
	evDefineEntityValue:   {fName, fType},
	evCreateContainer:     {fTime, fName, fType, fContainer},
	evDestroyContainer:    {fTime, fName, fType},
	evNewEvent:            {fTime, fType, fContainer, fValue},
	evSetState:            {fTime, fType, fContainer, fValue},
	evPushState:           {fTime, fType, fContainer, fValue},
	evPopState:            {fTime, fType, fContainer},
	evResetState:          {fTime, fType, fContainer},
	evStartLink:           {fTime, fType, fContainer, fStartContainer, fValue, fKey},
	evEndLink:             {fTime, fType, fContainer, fEndContainer, fValue, fKey},
	evSetVariable:         {fTime, fType, fContainer, fValue},
	evAddVariable:         {fTime, fType, fContainer, fValue},
	evSubVariable:         {fTime, fType, fContainer, fValue},
	evTraceFile:           {fType, fContainer, fFilename},
}

// eventDef is one %EventDef block: which column holds which field.
type eventDef struct {
	id      string
	kind    eventKind
	nfields int
	// idx[f] is the column (0-based, after the id) of standard field f, or -1.
	idx [numFields]int16
	// extras are the user-defined fields, in header order.
	extras []extraField
	// names of every column, for error messages.
	names []string
	// line is where the definition starts.
	line int64
}

type extraField struct {
	name string
	col  int
}

// timed reports whether events of this definition carry a time.
func (d *eventDef) timed() bool { return d.idx[fTime] >= 0 }

// header accumulates %-lines into event definitions.
type header struct {
	defs     map[string]*eventDef
	byNum    [maxNumID]*eventDef // defs of the ids "0" to "255"
	cur      *eventDef
	curNames map[string]bool
	noStrict bool
	// maxDefs bounds the event definitions (0: no bound): a million of
	// them took 480 MB.
	maxDefs int
	// snap is the definitions so far, for the goroutines that decode
	// lines ahead of the parser (reader.go). A definition is never
	// replaced nor removed: one found there is the one in force at any
	// later line.
	snap atomic.Pointer[defSnap]
}

// defSnap is an immutable copy of a header's definitions.
type defSnap struct {
	byNum [maxNumID]*eventDef
	defs  map[string]*eventDef
}

// maxNumID bounds the event ids looked up in an array: StarPU and SimGrid
// number their events from 0.
const maxNumID = 256

// numID returns the value of an event id written as a small decimal
// number without leading zeros ("0" to "255"), else -1.
//
// It runs for every line: by length rather than in a loop.
func numID(b []byte) int {
	switch len(b) {
	case 1:
		if d := b[0] - '0'; d < 10 {
			return int(d)
		}
	case 2:
		if d0, d1 := b[0]-'0', b[1]-'0'; d0-1 < 9 && d1 < 10 { // no leading zero
			return int(d0)*10 + int(d1)
		}
	case 3:
		d0, d1, d2 := b[0]-'0', b[1]-'0', b[2]-'0'
		if n := int(d0)*100 + int(d1)*10 + int(d2); d0-1 < 9 && d1 < 10 && d2 < 10 && n < maxNumID {
			return n
		}
	}
	return -1
}

// lookup returns the definition of event id b, or nil.
func (h *header) lookup(b []byte) *eventDef {
	if n := numID(b); n >= 0 {
		return h.byNum[n]
	}
	return h.defs[string(b)]
}

// lookup returns the definition of event id b in the snapshot, or nil.
func (s *defSnap) lookup(b []byte) *eventDef {
	if s == nil {
		return nil
	}
	if n := numID(b); n >= 0 {
		return s.byNum[n]
	}
	return s.defs[string(b)]
}

func newHeader(noStrict bool) *header {
	return &header{defs: make(map[string]*eventDef), noStrict: noStrict}
}

// maxSnapDefs bounds the definitions published: each snapshot copies them
// all (real traces have a few dozen; past this, the parser looks up the
// others itself).
const maxSnapDefs = 1024

// add records a complete definition and publishes a new snapshot.
func (h *header) add(d *eventDef) {
	h.defs[d.id] = d
	if n := numID([]byte(d.id)); n >= 0 {
		h.byNum[n] = d
	}
	if len(h.defs) > maxSnapDefs {
		return
	}
	s := &defSnap{byNum: h.byNum, defs: make(map[string]*eventDef, len(h.defs))}
	for id, d := range h.defs {
		if numID([]byte(id)) < 0 {
			s.defs[id] = d
		}
	}
	h.snap.Store(s)
}

// line handles one header line (it starts with '%'). It returns a reason on
// error.
func (h *header) line(toks []token, num int64) string {
	// pajeng accepts "%EventDef" and "% EventDef": drop the '%' and, when it
	// stands alone, take the next word.
	words := toks
	first := string(words[0].b[1:])
	if first == "" {
		words = words[1:]
		if len(words) == 0 {
			return "" // a lone "%" line
		}
		first = string(words[0].b)
	}
	rest := words[1:]
	switch first {
	case "EventDef":
		if h.cur != nil {
			return "%EventDef inside the definition of event " + lineerr.Cut(h.cur.id) + " (missing %EndEventDef)"
		}
		if len(rest) != 2 {
			return "%EventDef needs an event name and an id"
		}
		name, id := string(rest[0].b), string(rest[1].b)
		kind := eventKind(numEventKinds)
		for k, n := range eventNames {
			if n == name {
				kind = eventKind(k)
			}
		}
		if kind == numEventKinds {
			return "unknown event name " + quote(name)
		}
		if _, dup := h.defs[id]; dup {
			return "redefinition of event with id " + quote(id)
		}
		if h.maxDefs > 0 && len(h.defs) >= h.maxDefs {
			return "more than " + strconv.Itoa(h.maxDefs) + " event definitions (raise --max-types)"
		}
		h.cur = &eventDef{id: id, kind: kind, line: num}
		for i := range h.cur.idx {
			h.cur.idx[i] = -1
		}
		h.curNames = make(map[string]bool)
		return ""
	case "EndEventDef":
		d := h.cur
		if d == nil {
			return "%EndEventDef without %EventDef"
		}
		h.cur = nil
		var missing []string
		for _, f := range obligatory[d.kind] {
			if d.idx[f] < 0 {
				missing = append(missing, fieldNames[f])
			}
		}
		if len(missing) > 0 {
			r := "invalid definition of " + eventNames[d.kind] + " " + lineerr.Cut(d.id) + ": obligatory fields missing: " + strings.Join(missing, ", ")
			if !h.noStrict {
				for _, n := range d.names {
					if _, old := deprecatedFields[n]; old {
						r += " (old field name " + n + ": use --no-strict)"
						break
					}
				}
			}
			return r
		}
		h.add(d)
		return ""
	}
	// A field line: "% Name Type".
	d := h.cur
	if d == nil {
		return "field definition outside %EventDef ... %EndEventDef"
	}
	if len(rest) != 1 {
		return "field definition needs a name and a type"
	}
	name, typ := first, string(rest[0].b)
	switch typ {
	case "date", "int", "double", "hex", "string", "color", "float":
	default:
		return "unknown field type " + quote(typ) + " for field " + quote(name)
	}
	if d.nfields >= maxDefFields {
		return "event " + lineerr.Cut(d.id) + " has more than " + strconv.Itoa(maxDefFields) + " fields"
	}
	col := d.nfields
	d.nfields++
	d.names = append(d.names, name)
	f, std := lookupField(name, h.noStrict)
	if std {
		if h.curNames[fieldNames[f]] {
			return "field " + quote(name) + " defined twice in event " + lineerr.Cut(d.id)
		}
		h.curNames[fieldNames[f]] = true
		d.idx[f] = int16(col)
		return ""
	}
	d.extras = append(d.extras, extraField{name: name, col: col})
	return ""
}

func lookupField(name string, noStrict bool) (field, bool) {
	for f, n := range fieldNames {
		if n == name {
			return field(f), true
		}
	}
	if noStrict {
		if f, ok := deprecatedFields[name]; ok {
			return f, true
		}
	}
	return 0, false
}

// maxDefFields bounds an event definition's fields: their columns are
// int16s (eventDef.idx).
const maxDefFields = math.MaxInt16

// quote quotes a name or token in a message, cut to lineerr.MaxQuote bytes.
func quote(s string) string { return "'" + lineerr.Cut(s) + "'" }
