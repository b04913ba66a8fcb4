package power

import (
	"bytes"
	"encoding/json"

	"github.com/tracecast/tracecast"
)

// fastRecord parses the common case of a JSON record without
// encoding/json: one object of string and number values (other values,
// nested objects and arrays included, are skipped), strings without
// escapes (nested values are checked with json.Valid). It reports ok = false for anything else, and the caller falls
// back to encoding/json, so behaviour is the same, only faster.
func (rd *reader) fastRecord(b []byte, num int64) (err error, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	// Last occurrence of each key wins, as in encoding/json.
	var timeB, stampB, nodeB, devB, metricB, wattsB, valueB []byte
	var timeStr, stampStr bool
	for first := true; ; first = false {
		i = skipWS(b, i)
		if first && i < len(b) && b[i] == '}' {
			i++
			break
		}
		key, j, ok := jsonString(b, i)
		if !ok {
			return nil, false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return nil, false
		}
		var raw []byte
		isStr := false
		switch c := b[i]; {
		case c == '"':
			s, j, ok := jsonString(b, i)
			if !ok {
				return nil, false
			}
			raw, isStr, i = s, true, j
		case c == '{' || c == '[':
			j, ok := skipNested(b, i)
			if !ok || !json.Valid(b[i:j]) {
				return nil, false // encoding/json says what is wrong
			}
			i = j
		default:
			j := i
			for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
				j++
			}
			raw, i = b[i:j], j
			if !jsonNumber(raw) && string(raw) != "true" && string(raw) != "false" {
				return nil, false // null and anything odd: encoding/json decides
			}
		}
		switch string(key) {
		case "time":
			timeB, timeStr = raw, isStr
		case "timestamp":
			stampB, stampStr = raw, isStr
		case "node", "device_id", "metric_id":
			if !isStr {
				return nil, false
			}
			switch string(key) {
			case "node":
				nodeB = raw
			case "device_id":
				devB = raw
			default:
				metricB = raw
			}
		case "watts", "value":
			if isStr || raw == nil || !jsonNumber(raw) {
				return nil, false
			}
			if string(key) == "watts" {
				wattsB = raw
			} else {
				valueB = raw
			}
		default:
			// encoding/json matches keys case-insensitively: leave
			// "Watts" and friends to it.
			for _, k := range jsonKeys {
				if bytes.EqualFold(key, k) {
					return nil, false
				}
			}
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			i++
			break
		}
		return nil, false
	}
	tsB, tsStr := timeB, timeStr
	if tsB == nil {
		tsB, tsStr = stampB, stampStr
	}
	valB := wattsB
	if valB == nil {
		valB = valueB
	}
	if skipWS(b, i) != len(b) || tsB == nil || valB == nil {
		return nil, false
	}
	val, err := parseFloat(valB)
	if err != nil {
		return nil, false
	}
	if len(nodeB) == 0 {
		nodeB = devB
	}
	if rd.opts.Metric != "" && len(metricB) > 0 && string(metricB) != rd.opts.Metric {
		rd.stats.Filtered++
		return nil, true
	}
	var t float64
	var perr error
	if tsStr {
		t, perr = rfc3339(string(tsB)) // a quoted number is no time (jsonTime)
	} else if jsonNumber(tsB) {
		t, perr = parseFloat(tsB)
	} else {
		return nil, false
	}
	if perr != nil {
		return nil, false
	}
	if val < 0 {
		return nil, false
	}
	node := rd.opts.Node
	if len(nodeB) > 0 {
		node = rd.intern(nodeB)
	}
	return rd.emit(tracecast.PowerSample{T: t, Node: node, Watts: val}), true
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// jsonString reads a string without escapes at b[i] == '"'.
func jsonString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	j := bytes.IndexByte(b[i+1:], '"')
	if j < 0 {
		return nil, i, false
	}
	s = b[i+1 : i+1+j]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, i, false
	}
	for _, c := range s {
		if c < 0x20 || c >= 0x80 {
			return nil, i, false // control or non-ASCII: let encoding/json validate
		}
	}
	return s, i + j + 2, true
}

// skipNested skips a nested object or array (strings without escapes).
func skipNested(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '"':
			_, j, ok := jsonString(b, i)
			if !ok {
				return i, false
			}
			i = j
			continue
		}
		i++
	}
	return i, false
}

var jsonKeys = [][]byte{[]byte("time"), []byte("timestamp"), []byte("node"), []byte("device_id"),
	[]byte("watts"), []byte("value"), []byte("metric_id")}

// jsonNumber reports whether b is a JSON number.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}
