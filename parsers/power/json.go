package power

import (
	"encoding/json"
	"strconv"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/lineerr"
)

// jsonRecord accepts the keys of the JSON-lines format and of Kwollect.
//
// A record is decoded as encoding/json decodes it into this struct, and the
// fast path (fastRecord) decides the same: a key given twice takes its last
// value, keys match case-insensitively ("Value" is value), unknown keys are
// ignored. The time is "time", else "timestamp": a JSON number (seconds) or
// a JSON string holding an RFC 3339 time; a string holding a number
// ("1753114530.5") is a bad time, as encoding/json refuses a string for a
// number. The power is "watts", else "value": a JSON number, not a string.
type jsonRecord struct {
	Time      json.RawMessage `json:"time"`
	Timestamp json.RawMessage `json:"timestamp"`
	Node      string          `json:"node"`
	DeviceID  string          `json:"device_id"`
	Watts     *float64        `json:"watts"`
	Value     *float64        `json:"value"`
	MetricID  string          `json:"metric_id"`
}

func (rd *reader) jsonLine(b []byte, num int64) error {
	if err, ok := rd.fastRecord(b, num); ok {
		return err
	}
	var rec jsonRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return rd.bad(num, "json", "bad JSON: "+lineerr.Detail(err))
	}
	return rd.record(&rec, num)
}

// jsonTime reads a record's time: a JSON number, or a JSON string holding
// an RFC 3339 time.
func jsonTime(raw []byte) (float64, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return rfc3339(s)
	}
	return parseFloat(raw)
}

func (rd *reader) record(rec *jsonRecord, num int64) error {
	if rd.opts.Metric != "" && rec.MetricID != "" && rec.MetricID != rd.opts.Metric {
		rd.stats.Filtered++
		return nil
	}
	ts := rec.Time
	if len(ts) == 0 {
		ts = rec.Timestamp
	}
	if len(ts) == 0 {
		return rd.bad(num, "time", "no time or timestamp")
	}
	t, err := jsonTime(ts)
	if err != nil {
		return rd.bad(num, "time", "bad time "+lineerr.QuoteBytes(ts))
	}
	v := rec.Watts
	if v == nil {
		v = rec.Value
	}
	if v == nil {
		return rd.bad(num, "value", "no watts or value")
	}
	if *v < 0 || *v != *v || *v > maxValue {
		return rd.bad(num, "value", "bad power "+strconv.FormatFloat(*v, 'g', -1, 64))
	}
	node := rec.Node
	if node == "" {
		node = rec.DeviceID
	}
	if node == "" {
		node = rd.opts.Node
	}
	if s, ok := rd.nodes[node]; ok {
		node = s
	} else {
		rd.nodes[node] = node
	}
	return rd.emit(tracecast.PowerSample{T: t, Node: node, Watts: *v})
}
