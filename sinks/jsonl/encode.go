package jsonl

import (
	"strconv"
	"unicode/utf8"

	"github.com/tracecast/tracecast"
)

// AppendEntity appends e to dst as one JSON object, without a newline, and
// returns the extended buffer. It allocates nothing when dst has room.
//
// "record": "entity" comes first, as in every record's JSON; then only the
// fields that mean something for e's nature are written (the others, null
// in the Arrow and Parquet outputs, are absent):
//
//	Container: nature container type start end duration value
//	State:     nature container type start end duration imbrication value
//	Variable:  nature container type start end duration number
//	Event:     nature container type start value
//	Link:      nature container type start end duration value start_container end_container key
//
// An unknown nature gets every field. "extra" (an object of the user-defined
// fields, in header order) is added to any nature when it is non-empty.
func AppendEntity(dst []byte, e *tracecast.Entity) []byte {
	dst = append(dst, `{"record":"entity","nature":`...)
	dst = AppendString(dst, e.Nature.String())
	dst = append(dst, `,"container":`...)
	dst = AppendString(dst, e.Container)
	dst = append(dst, `,"type":`...)
	dst = AppendString(dst, e.Type)
	dst = append(dst, `,"start":`...)
	dst = AppendFloat(dst, e.Start)
	if e.Nature != tracecast.NatureEvent {
		dst = append(dst, `,"end":`...)
		dst = AppendFloat(dst, e.End)
		dst = append(dst, `,"duration":`...)
		dst = AppendFloat(dst, e.Duration())
	}
	known := e.Nature >= tracecast.NatureContainer && e.Nature <= tracecast.NatureLink
	if e.Nature == tracecast.NatureState || !known {
		dst = append(dst, `,"imbrication":`...)
		dst = strconv.AppendInt(dst, int64(e.Imbrication), 10)
	}
	if e.Nature != tracecast.NatureVariable || !known {
		dst = append(dst, `,"value":`...)
		dst = AppendString(dst, e.Value)
	}
	if e.Nature == tracecast.NatureVariable || !known {
		dst = append(dst, `,"number":`...)
		dst = AppendFloat(dst, e.Number)
	}
	if e.Nature == tracecast.NatureLink || !known {
		dst = append(dst, `,"start_container":`...)
		dst = AppendString(dst, e.StartContainer())
		dst = append(dst, `,"end_container":`...)
		dst = AppendString(dst, e.EndContainer())
		dst = append(dst, `,"key":`...)
		dst = AppendString(dst, e.Key())
	}
	if len(e.Extra()) > 0 {
		dst = append(dst, `,"extra":`...)
		dst = AppendFields(dst, e.Extra())
	}
	return append(dst, '}')
}

// AppendFields appends fields as a JSON object, {"Name":"Value",...} in
// their order: an entity's user-defined fields, its "extra" here and in
// the Arrow and Parquet outputs.
func AppendFields(dst []byte, fields []tracecast.Field) []byte {
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, f.Name)
		dst = append(dst, ':')
		dst = AppendString(dst, f.Value)
	}
	return append(dst, '}')
}

// AppendLine appends a text line as {"num":N,"end":E,"data":"..."}, which is
// how raw lines (a source without a parser) are dumped.
func AppendLine(dst []byte, l *tracecast.Line) []byte {
	dst = append(dst, `{"num":`...)
	dst = strconv.AppendInt(dst, l.Num, 10)
	dst = append(dst, `,"end":`...)
	dst = strconv.AppendInt(dst, l.End, 10)
	dst = append(dst, `,"data":`...)
	dst = appendJSONString(dst, l.Data, utf8.DecodeRune)
	return append(dst, '}')
}

// AppendFloat appends f as a JSON number: the shortest decimal that parses
// back to exactly f (strconv precision -1), laid out like JavaScript and
// encoding/json do — plain notation for 1e-6 ≤ |f| < 1e21, exponent notation
// outside ("1e-7", "1e+21"). Shortest round-trip beats a fixed number of
// decimals: trace times span seconds (SimGrid) to milliseconds (StarPU), so any
// fixed precision either loses digits or pads noise. Plain strconv 'g' would
// also be shortest, but it switches to exponents for ordinary timestamps
// ("1.718e+09"), which hurts reading the output. JSON has no NaN or
// infinity: they are written as null. (It is tracecast.AppendJSONNumber,
// which the records' own encoders use.)
func AppendFloat(dst []byte, f float64) []byte {
	return tracecast.AppendJSONNumber(dst, f)
}

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are not escaped (the output is data,
// not a web page).
func AppendString(dst []byte, s string) []byte {
	return appendJSONString(dst, s, utf8.DecodeRuneInString)
}

const hexDigits = "0123456789abcdef"

// appendJSONString takes the rune decoder as a parameter so that the string
// and []byte instantiations both avoid converting (and copying) their input.
func appendJSONString[S string | []byte](dst []byte, s S, decodeRune func(S) (rune, int)) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript parsers
		// that eval lines; escape them like encoding/json.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
