package tracecast

import (
	"math"
	"strconv"
	"time"
)

// The JSON form of the records, one object per record, is the record
// contract of the JSON-lines and Kafka outputs (docs/schemas/ has a JSON
// Schema per record type): "record" first (the RecordType's Name), then
// the fields, named as the Arrow columns are; a field that does not apply
// to a record is null, never a placeholder (-1, 0, ""); non-finite numbers
// are null; strings are not HTML-escaped. Entities are encoded by the
// jsonl package (a hot path: no allocation per record), which omits the
// fields that do not apply to an entity's nature.

// AppendJSONNumber appends f as a JSON number: the shortest decimal that
// parses back to exactly f, laid out like JavaScript and encoding/json do —
// plain notation for 1e-6 ≤ |f| < 1e21, exponent notation outside ("1e-7",
// "1e+21"). JSON has no NaN or infinity: they are written as null.
func AppendJSONNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Trim a leading zero of the exponent: "1e-07" -> "1e-7".
	if m := len(dst); m-n >= 4 && dst[m-4] == 'e' && dst[m-3] == '-' && dst[m-2] == '0' {
		dst[m-2] = dst[m-1]
		dst = dst[:m-1]
	}
	return dst
}

func appendKey(b []byte, k string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// appendF is a number field written like AppendJSONNumber.
func appendF(b []byte, k string, v float64) []byte {
	return AppendJSONNumber(appendKey(b, k), v)
}

func appendI64(b []byte, k string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, k), v, 10)
}

func appendBool(b []byte, k string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, k), v)
}

func appendNull(b []byte, k string) []byte {
	return append(appendKey(b, k), "null"...)
}

// appendStrOrNull writes "" as null: a string that does not apply.
func appendStrOrNull(b []byte, k, v string) []byte {
	if v == "" {
		return appendNull(b, k)
	}
	return appendStr(b, k, v)
}

// appendTime writes an RFC 3339 UTC timestamp to the microsecond (the
// precision of the Arrow and Parquet timestamp[us, UTC] columns), null for
// the zero time.
func appendTime(b []byte, k string, t time.Time) []byte {
	if t.IsZero() {
		return appendNull(b, k)
	}
	b = append(appendKey(b, k), '"')
	b = t.UTC().Truncate(time.Microsecond).AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// AppendJSON writes the sample as one JSON object, "record" first.
func (s Sample) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"sample"`...)
	b = appendI64(b, "k", s.K)
	b = appendF(b, "t", s.T)
	b = appendI64(b, "x", int64(s.X))
	return append(b, '}')
}

// AppendJSON writes the window as one JSON object, "record" first; d, p
// and hit are null for a window compared with none (the first).
func (w Window) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"window"`...)
	b = appendStr(b, "trace", w.Trace)
	b = appendStr(b, "class", w.Class)
	b = appendI64(b, "index", w.Index)
	b = appendF(b, "start", w.Start)
	b = appendF(b, "end", w.End)
	b = appendI64(b, "n", int64(w.N))
	if w.Compared {
		b = appendF(b, "d", w.D)
		b = appendF(b, "p", w.P)
		b = appendBool(b, "hit", w.Hit)
	} else {
		b = appendNull(appendNull(appendNull(b, "d"), "p"), "hit")
	}
	b = appendBool(b, "compared", w.Compared)
	return append(b, '}')
}

// AppendJSON writes the prediction as one JSON object, "record" first.
func (p Prediction) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"prediction"`...)
	b = appendStr(b, "id", p.ID)
	b = appendStr(b, "trace", p.Trace)
	b = appendI64(b, "window", p.Window)
	b = appendF(b, "start", p.Start)
	b = appendF(b, "end", p.End)
	b = appendF(b, "horizon_s", p.HorizonS)
	b = appendStr(b, "class", p.Class)
	b = appendStr(b, "query", p.Query)
	b = appendI64(b, "at_least", int64(p.AtLeast))
	b = appendI64(b, "r", int64(p.R))
	b = appendF(b, "likelihood", p.Likelihood)
	b = appendTime(b, "emitted_at", p.EmittedAt)
	return append(b, '}')
}

// AppendJSON writes the verdict as one JSON object, "record" first.
func (v Verdict) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"verdict"`...)
	b = appendStr(b, "id", v.ID)
	b = appendStr(b, "prediction_id", v.PredictionID)
	b = appendStr(b, "trace", v.Trace)
	b = appendI64(b, "window", v.Window)
	b = appendStr(b, "query", v.Query)
	b = appendF(b, "likelihood", v.Likelihood)
	b = appendF(b, "observed", v.Observed)
	b = appendF(b, "d", v.D)
	b = appendF(b, "p", v.P)
	b = appendBool(b, "hit", v.Hit)
	b = appendStr(b, "method", v.Method)
	b = appendF(b, "start", v.Start)
	b = appendF(b, "end", v.End)
	b = appendI64(b, "predicted_at", v.PredictedAt)
	b = appendI64(b, "at_least", int64(v.AtLeast))
	b = appendStr(b, "class", v.Class)
	b = appendF(b, "horizon_s", v.HorizonS)
	b = appendI64(b, "misses_in_a_row", int64(v.MissesInARow))
	b = appendTime(b, "emitted_at", v.EmittedAt)
	return append(b, '}')
}

// AppendJSON writes the alert as one JSON object, "record" first.
func (a Alert) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"alert"`...)
	b = appendStr(b, "id", a.ID)
	b = appendStr(b, "trace", a.Trace)
	b = appendI64(b, "window", a.Window)
	b = appendStr(b, "kind", a.Kind)
	b = appendStr(b, "query", a.Query)
	b = appendF(b, "value", a.Value)
	b = appendF(b, "threshold", a.Threshold)
	b = appendF(b, "start", a.Start)
	b = appendF(b, "end", a.End)
	b = appendStr(b, "message", a.Message)
	b = appendTime(b, "emitted_at", a.EmittedAt)
	return append(b, '}')
}

// AppendJSON writes the energy row as one JSON object, "record" first;
// window is null on the rows of totals over the whole run (Window -1).
func (e EnergyRow) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"energy"`...)
	b = appendStr(b, "node", e.Node)
	if e.Window < 0 {
		b = appendNull(b, "window")
	} else {
		b = appendI64(b, "window", e.Window)
	}
	b = appendF(b, "start", e.Start)
	b = appendF(b, "end", e.End)
	b = appendStr(b, "class", e.Class)
	b = appendF(b, "energy_j", e.EnergyJ)
	b = appendF(b, "occupancy_s", e.OccupancyS)
	return append(b, '}')
}

// AppendJSON writes the power sample as one JSON object, "record" first;
// since is null unless the sample is a mean (mean: true).
func (p PowerSample) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"power"`...)
	b = appendF(b, "t", p.T)
	b = appendStr(b, "node", p.Node)
	b = appendF(b, "watts", p.Watts)
	b = appendBool(b, "mean", p.Mean)
	if p.Mean {
		b = appendF(b, "since", p.Since)
	} else {
		b = appendNull(b, "since")
	}
	return append(b, '}')
}

// AppendJSON writes the call as one JSON object, "record" first, with the
// names of the I/O-call JSON-lines schema (docs/io.md), which the iocall
// parser reads back: path, err and flags are null when empty; fd, offset,
// requested and bytes when unknown or none (-1 in IOCall).
func (c IOCall) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"iocall"`...)
	b = appendF(b, "time", c.Time)
	b = appendI64(b, "pid", int64(c.PID))
	b = appendStr(b, "op", c.Op)
	b = appendStrOrNull(b, "path", c.Path)
	for _, f := range []struct {
		k string
		v int64
	}{{"fd", int64(c.FD)}, {"offset", c.Offset}, {"requested", c.Req}, {"bytes", c.Bytes}} {
		if f.v < 0 {
			b = appendNull(b, f.k)
		} else {
			b = appendI64(b, f.k, f.v)
		}
	}
	b = appendF(b, "duration", c.Dur)
	b = appendStrOrNull(b, "err", c.Err)
	b = appendStrOrNull(b, "flags", c.Flags.String())
	return append(b, '}')
}
