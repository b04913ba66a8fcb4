package kafka

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
)

// fuzzMessages decodes a partition's messages from fuzzer bytes: records
// separated by 0xff; in each, a byte of flags (bit 0: a tracecast-seq
// header, its value the next byte, or "x" with bit 2; bit 1: an end
// marker; bit 3: no key), a byte choosing one of four trace ids, then the
// value.
func fuzzMessages(data []byte) []kafkago.Message {
	var ms []kafkago.Message
	for i, rec := range bytes.Split(data, []byte{0xff}) {
		if len(rec) < 2 {
			continue
		}
		flags, key, value := rec[0], []byte("t"+strconv.Itoa(int(rec[1]%4))), rec[2:]
		m := kafkago.Message{Partition: 0, Offset: int64(i), Key: key, Value: value}
		if flags&8 != 0 {
			m.Key = nil
		}
		if flags&1 != 0 {
			v := []byte("x")
			if flags&4 == 0 && len(value) > 0 {
				v = strconv.AppendInt(nil, int64(value[0]%3)*2, 10) // 0 starts a trace
			}
			m.Headers = append(m.Headers, kafkago.Header{Key: HeaderSeq, Value: v})
		}
		if flags&2 != 0 {
			m.Value = nil
			m.Headers = append(m.Headers, kafkago.Header{Key: HeaderEnd, Value: []byte("1")})
		}
		ms = append(ms, m)
	}
	return ms
}

// FuzzDecode feeds arbitrary messages to the source's decoder (handle,
// flush, barrier: everything but the network) and checks what it emits:
// each line is one line of a message of its trace, numbered from 1 in its
// run without gaps; every byte of an accepted message comes out but for
// the lines it repeats (by tracecast-seq); a trace's lines come after its
// reset, never after its end or drop; and a checkpoint never
// commits past the first message of a trace still open.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("\x01\x00\x00%EventDef PajeX 0\n%EndEventDef\n1 a\xff\x01\x00\x011 b\xff\x02\x00\xff\x00\x01%Header\n\xff\x00\x01e\n\n"))
	f.Add([]byte("\x00\x02%a\xff\x00\x021 b\xff\x00\x02%c\xff\x08\x00x\xff\x05\x03y\xff\x03\x03"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := New(Options{Brokers: []string{"x:1"}, Topic: "lines", Group: "g"})
		if err != nil {
			t.Fatal(err)
		}
		g := &genState{parts: map[int]*partState{0: {next: -1, open: map[string]int64{}}}, traces: map[string]*traceState{},
			pending: map[string][]tracecast.Line{}}
		type run struct {
			num   int64
			ended bool
		}
		runs := map[string]*run{}
		var emitted int
		var cp *checkpoint
		emit := func(_ context.Context, b tracecast.Batch) error {
			switch it := b.Items.(type) {
			case []tracecast.Line:
				r := runs[b.Stream]
				if r == nil || r.ended {
					r = &run{}
					runs[b.Stream] = r
				}
				for _, l := range it {
					if bytes.IndexByte(l.Data, '\n') >= 0 {
						t.Fatalf("%s: line %d holds a newline: %q", b.Stream, l.Num, l.Data)
					}
					if r.num++; l.Num != r.num {
						t.Fatalf("%s: line numbered %d after %d", b.Stream, l.Num, r.num-1)
					}
					emitted += len(l.Data) + 1
				}
			case tracecast.StreamReset:
				delete(runs, b.Stream)
			case tracecast.StreamEnd, tracecast.StreamDrop:
				if r := runs[b.Stream]; r != nil {
					r.ended = true
				}
			case *tracecast.Barrier:
				it.Hold(1)
				it.Release()
			}
			return nil
		}
		ctx := context.Background()
		accepted := 0
		for i, m := range fuzzMessages(data) {
			before := s.Stats()
			if err := s.handle(g, m, ctx, emit); err != nil {
				t.Fatal(err)
			}
			after := s.Stats()
			if after.Skipped == before.Skipped && after.LinesLost == before.LinesLost && len(m.Key) > 0 && len(m.Value) > 0 {
				if _, end := header(&m, HeaderEnd); !end {
					// Each line and its newline (the last one's is
					// optional), but for the lines read already.
					v := m.Value
					for n := after.Repeated - before.Repeated; n > 0; n-- {
						if len(v) == 0 {
							t.Fatalf("%d lines repeated of a message with fewer", after.Repeated-before.Repeated)
						}
						if i := bytes.IndexByte(v, '\n'); i >= 0 {
							v = v[i+1:]
						} else {
							v = nil
						}
					}
					accepted += len(v)
					if len(v) > 0 && v[len(v)-1] != '\n' {
						accepted++
					}
				}
			}
			if i%3 == 2 {
				if err := s.flush(ctx, g, emit); err != nil {
					t.Fatal(err)
				}
			}
			if i%5 == 4 {
				if _, err := s.barrier(ctx, g, emit); err != nil {
					t.Fatal(err)
				}
				s.mu.Lock()
				cp, s.acked = s.acked, nil
				s.mu.Unlock()
				if cp != nil {
					for id, first := range g.parts[0].open {
						if cp.offsets[0] > first {
							t.Fatalf("checkpoint at offset %d, past the first message (%d) of the open trace %s", cp.offsets[0], first, id)
						}
					}
				}
			}
		}
		if err := s.flush(ctx, g, emit); err != nil {
			t.Fatal(err)
		}
		if emitted != accepted {
			t.Fatalf("%d bytes of lines emitted, %d in the accepted messages", emitted, accepted)
		}
	})
}
