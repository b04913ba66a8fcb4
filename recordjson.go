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

// appendRawJSON writes v, a JSON value, or null when it is empty.
func appendRawJSON(b []byte, k string, v []byte) []byte {
	if len(v) == 0 {
		return appendNull(b, k)
	}
	return append(appendKey(b, k), v...)
}
