package power

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/tracecast/tracecast"
)

// jsonRecord accepts the keys of the JSON-lines format and of Kwollect.
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
		return rd.bad(num, "json", "bad JSON: "+err.Error())
	}
	return rd.record(&rec, num)
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
	t, err := parseTime(ts)
	if err != nil {
		return rd.bad(num, "time", "bad time "+string(ts))
	}
	v := rec.Watts
	if v == nil {
		v = rec.Value
	}
	if v == nil {
		return rd.bad(num, "value", "no watts or value")
	}
	if *v < 0 || *v != *v {
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

// kwollect reads a Kwollect response: a JSON array of records, or records
// one a line. The response of one query is held in memory (Kwollect
// answers are bounded by the query's time range).
func (rd *reader) kwollect(in io.Reader) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return &Error{File: rd.opts.Name, Reason: err.Error()}
	}
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 || trim[0] != '[' {
		return rd.lines(bytes.NewReader(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var seenOff, seenLines int
	lineAt := func(off int64) int64 {
		o := min(int(off), len(data))
		if o > seenOff {
			seenLines += bytes.Count(data[seenOff:o], []byte{'\n'})
			seenOff = o
		}
		return int64(seenLines) + 1
	}
	if _, err := dec.Token(); err != nil {
		return &Error{File: rd.opts.Name, Line: 1, Kind: "json", Reason: err.Error()}
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			// The array is broken: nothing after this point can be trusted.
			return &Error{File: rd.opts.Name, Line: lineAt(dec.InputOffset()), Kind: "json", Reason: "bad JSON: " + err.Error()}
		}
		num := lineAt(dec.InputOffset())
		rd.stats.Lines = num
		var rec jsonRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			if err := rd.bad(num, "json", "bad record: "+err.Error()); err != nil {
				return err
			}
			continue
		}
		if err := rd.record(&rec, num); err != nil {
			return err
		}
	}
	return nil
}
