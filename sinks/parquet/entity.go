package parquet

import (
	"slices"
	"unsafe"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// isEntitySchema says whether cols are the entity schema's columns
// (arrow.EntitySchema), which appendEntities fills straight from the
// entities, without building Arrow records first.
func isEntitySchema(cols []*column) bool {
	want, err := columnsOf(arrow.EntitySchema(""))
	if err != nil || len(want) != len(cols) {
		return false
	}
	for i, c := range cols {
		if c.name != want[i].name || c.kind != want[i].kind || c.optional != want[i].optional || c.logical != want[i].logical {
			return false
		}
	}
	return true
}

// extend returns s extended by n elements, and those n elements. The
// loops below fill the tail through a local slice: appending to a
// column's field would load and store the field's length at each value.
func extend[T any](s []T, n int) ([]T, []T) {
	s = slices.Grow(s, n)[:len(s)+n]
	return s, s[len(s)-n:]
}

// appendEntities appends es to the columns of the entity schema, with the
// values the Arrow entity table gives them (sinks/arrow, bindEntity).
func appendEntities(cols []*column, es []tracecast.Entity, scratch []byte) []byte {
	nature, container, typ := cols[0], cols[1], cols[2]
	start, end, duration, imbrication := cols[3], cols[4], cols[5], cols[6]
	value, number := cols[7], cols[8]
	startC, endC, key, extra := cols[9], cols[10], cols[11], cols[12]
	n := len(es)
	if nature.fallback || container.fallback || typ.fallback || value.fallback {
		for i := range es {
			e := &es[i]
			nature.str(e.Nature.String())
			container.str(e.Container)
			typ.str(e.Type)
			value.str(e.Value)
		}
	} else {
		appendNames(nature, container, typ, value, es)
	}

	// The fixed-size columns, and the definition levels of the optional
	// ones, in one pass.
	var (
		s, en, d       []float64
		imb            []int32
		dn, dl, dx     []uint8
		vars, links, x int
	)
	start.f64, s = extend(start.f64, n)
	end.f64, en = extend(end.f64, n)
	duration.f64, d = extend(duration.f64, n)
	imbrication.i32, imb = extend(imbrication.i32, n)
	number.def, dn = extend(number.def, n)
	startC.def, dl = extend(startC.def, n)
	extra.def, dx = extend(extra.def, n)
	s, en, d, imb, dn, dl, dx = s[:n], en[:n], d[:n], imb[:n], dn[:n], dl[:n], dx[:n]
	for i := range es {
		e := &es[i]
		s[i], en[i], d[i] = e.Start, e.End, e.End-e.Start
		imb[i] = int32(e.Imbrication)
		v, l := b2i(e.Nature == tracecast.NatureVariable), b2i(e.Nature == tracecast.NatureLink)
		var f uint8
		if e.Ext != nil {
			f = b2i(len(e.Ext.Extra) > 0)
		}
		dn[i], dl[i], dx[i] = v, l, f
		vars += int(v)
		links += int(l)
		x += int(f)
	}
	endC.def = append(endC.def, dl...)
	key.def = append(key.def, dl...)
	for _, c := range [...]*column{start, end, duration, imbrication, number, startC, endC, key, extra} {
		c.rows += n
	}
	number.nulls += n - vars
	startC.nulls += n - links
	endC.nulls += n - links
	key.nulls += n - links
	extra.nulls += n - x
	if vars > 0 {
		for i := range es {
			if es[i].Nature == tracecast.NatureVariable {
				number.f64 = append(number.f64, es[i].Number)
			}
		}
	}
	if links > 0 {
		for i := range es {
			if e := &es[i]; e.Nature == tracecast.NatureLink {
				startC.value(e.StartContainer())
				endC.value(e.EndContainer())
				key.value(e.Key())
			}
		}
	}
	if x == 0 {
		return scratch
	}
	for i := range es {
		fields := es[i].Extra()
		if len(fields) == 0 {
			continue
		}
		scratch = jsonl.AppendFields(scratch[:0], fields)
		extra.valueCopy(unsafe.String(unsafe.SliceData(scratch), len(scratch)))
	}
	return scratch
}

// appendNames appends the entities' natures, containers, types and values
// to their dictionary-encoded columns.
func appendNames(nature, container, typ, value *column, es []tracecast.Entity) {
	n := len(es)
	var ni, ci, ti, vi []uint32
	nature.idx, ni = extend(nature.idx, n)
	container.idx, ci = extend(container.idx, n)
	typ.idx, ti = extend(typ.idx, n)
	value.idx, vi = extend(value.idx, n)
	ni, ci, ti, vi = ni[:n], ci[:n], ti[:n], vi[:n]
	var natures [8]uint32 // index + 1 by nature; 0: not looked up yet
	cd, td, vd := container.dict, typ.dict, value.dict
	for i := range es {
		e := &es[i]
		k := e.Nature & 7
		if natures[k] == 0 {
			natures[k] = nature.dict.index(e.Nature.String()) + 1
		}
		ni[i] = natures[k] - 1
		// dictionary.index by hand, three times: over the inliner's
		// budget.
		p := unsafe.StringData(e.Container)
		c := &cd.cache[uint8(uint64(uintptr(unsafe.Pointer(p)))*0x9e3779b97f4a7c15>>56)]
		if c.p == p && c.n == len(e.Container) {
			ci[i] = c.idx
		} else {
			ci[i] = cd.miss(e.Container, c)
		}
		p = unsafe.StringData(e.Type)
		c = &td.cache[uint8(uint64(uintptr(unsafe.Pointer(p)))*0x9e3779b97f4a7c15>>56)]
		if c.p == p && c.n == len(e.Type) {
			ti[i] = c.idx
		} else {
			ti[i] = td.miss(e.Type, c)
		}
		p = unsafe.StringData(e.Value)
		c = &vd.cache[uint8(uint64(uintptr(unsafe.Pointer(p)))*0x9e3779b97f4a7c15>>56)]
		if c.p == p && c.n == len(e.Value) {
			vi[i] = c.idx
		} else {
			vi[i] = vd.miss(e.Value, c)
		}
	}
	nature.rows += n
	container.rows += n
	typ.rows += n
	value.rows += n
}
