package jsonl

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
)

func TestAppendEntity(t *testing.T) {
	tests := []struct {
		name string
		e    tracecast.Entity
		want string
	}{
		{
			name: "state",
			e: tracecast.Entity{Nature: tracecast.NatureState, Container: "CPU0", Type: "S", Start: 1.5, End: 2,
				Imbrication: 1, Value: "Running", Number: 9, Ext: &tracecast.EntityExt{Key: "ignored"}},
			want: `{"record":"entity","nature":"State","container":"CPU0","type":"S","start":1.5,"end":2,"duration":0.5,"imbrication":1,"value":"Running"}`,
		},
		{
			name: "container",
			e:    tracecast.Entity{Nature: tracecast.NatureContainer, Container: "0", Type: "T", Start: 0, End: 10, Value: "root"},
			want: `{"record":"entity","nature":"Container","container":"0","type":"T","start":0,"end":10,"duration":10,"value":"root"}`,
		},
		{
			name: "variable",
			e:    tracecast.Entity{Nature: tracecast.NatureVariable, Container: "n", Type: "power", Start: 1, End: 3, Number: 1e-7},
			want: `{"record":"entity","nature":"Variable","container":"n","type":"power","start":1,"end":3,"duration":2,"number":1e-7}`,
		},
		{
			name: "event",
			e:    tracecast.Entity{Nature: tracecast.NatureEvent, Container: "c", Type: "E", Start: 0.1, End: 0.1, Value: "v"},
			want: `{"record":"entity","nature":"Event","container":"c","type":"E","start":0.1,"value":"v"}`,
		},
		{
			name: "link with extra",
			e: tracecast.Entity{Nature: tracecast.NatureLink, Container: "root", Type: "L", Start: 1, End: 4, Value: "MPI",
				Ext: &tracecast.EntityExt{StartContainer: "a", EndContainer: "b", Key: "k1", Extra: []tracecast.Field{{Name: "Size", Value: "42"}, {Name: "Tag", Value: `"x"`}}}},
			want: `{"record":"entity","nature":"Link","container":"root","type":"L","start":1,"end":4,"duration":3,"value":"MPI","start_container":"a","end_container":"b","key":"k1","extra":{"Size":"42","Tag":"\"x\""}}`,
		},
		{
			name: "unknown nature gets everything",
			e:    tracecast.Entity{Container: "c", Type: "t", Start: math.NaN(), End: math.Inf(1)},
			want: `{"record":"entity","nature":"","container":"c","type":"t","start":null,"end":null,"duration":null,"imbrication":0,"value":"","number":0,"start_container":"","end_container":"","key":""}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendEntity([]byte("prefix"), &tt.e))
			if got != "prefix"+tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, "prefix"+tt.want)
			}
			if !json.Valid([]byte(tt.want)) {
				t.Errorf("not valid JSON: %s", tt.want)
			}
		})
	}
}

func TestAppendFloatRoundTrips(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1.0 / 3, 123456.789, 1e21, 1e20, 1e-6, 9.99e-7, 1e-7, 5e-324, 1e-300, 1e300, math.MaxFloat64, -2.5e-9, 1718000000.123456} {
		s := string(AppendFloat(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != f {
			t.Errorf("%v -> %q -> %v, %v", f, s, back, err)
		}
		if want, _ := json.Marshal(f); s != string(want) {
			t.Errorf("AppendFloat(%v) = %s, encoding/json says %s", f, s, want)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " backslash \ slash /`, "ctl \x00\x01\x1f\x7f \b\f\n\r\t",
		"utf8 é 中文 🚀", "bad \xff\xfe utf8", "trunc \xe4\xb8", "sep \u2028 \u2029", "<html>&amp;",
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(AppendString(nil, s)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		line := tracecast.Line{Data: []byte(s), Num: 3, End: 7}
		if got, want := string(AppendLine(nil, &line)), `{"num":3,"end":7,"data":`+want+`}`; got != want {
			t.Errorf("AppendLine(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendEntityAllocatesNothing(t *testing.T) {
	e := tracecast.Entity{Nature: tracecast.NatureLink, Container: "root", Type: "L", Start: 1.25, End: 4, Value: "MPI é",
		Ext: &tracecast.EntityExt{StartContainer: "a", EndContainer: "b", Key: "k1", Extra: []tracecast.Field{{Name: "Size", Value: "42"}}}}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = AppendEntity(buf[:0], &e) }); n != 0 {
		t.Errorf("AppendEntity allocates %v times per record", n)
	}
}

type point struct {
	X float64 `json:"x"`
	Y string  `json:"y"`
}

type fast struct{ n int }

func (f *fast) AppendJSON(dst []byte) []byte {
	return append(strconv.AppendInt(append(dst, `{"n":`...), int64(f.n), 10), '}')
}

func TestSink(t *testing.T) {
	ents := []tracecast.Entity{
		{Nature: tracecast.NatureState, Container: "c", Type: "S", Start: 0, End: 1, Value: "a"},
		{Nature: tracecast.NatureEvent, Container: "c", Type: "E", Start: 2, Value: "b"},
	}
	tests := []struct {
		name  string
		items []any
		want  string
	}{
		{"entities", []any{ents, ents[:1]}, `{"record":"entity","nature":"State","container":"c","type":"S","start":0,"end":1,"duration":1,"imbrication":0,"value":"a"}
{"record":"entity","nature":"Event","container":"c","type":"E","start":2,"value":"b"}
{"record":"entity","nature":"State","container":"c","type":"S","start":0,"end":1,"duration":1,"imbrication":0,"value":"a"}
`},
		{"lines", []any{[]tracecast.Line{{Data: []byte("%EventDef"), Num: 1, End: 10}}}, `{"num":1,"end":10,"data":"%EventDef"}
`},
		// No HTML escaping: "<a>" stays "<a>".
		{"generic structs", []any{[]point{{1.5, "<a>"}, {2, "b"}}}, `{"x":1.5,"y":"<a>"}
{"x":2,"y":"b"}
`},
		{"appender", []any{[]fast{{1}, {2}}}, `{"n":1}
{"n":2}
`},
		{"single value and nil", []any{point{3, "c"}, nil}, `{"x":3,"y":"c"}
`},
		{"empty batch", []any{[]tracecast.Entity{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.jsonl")
			s, err := New(Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			for _, items := range tt.items {
				if err := s.Write(t.Context(), tracecast.Batch{Items: items}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(t.Context()); err != nil {
				t.Errorf("second Close: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tt.want)
			}
			if n := int64(strings.Count(tt.want, "\n")); s.Records() != n {
				t.Errorf("Records() = %d, want %d", s.Records(), n)
			}
			if err := s.Write(t.Context(), tracecast.Batch{Items: ents}); err == nil {
				t.Error("Write after Close succeeded")
			}
		})
	}
}

func TestSinkStdoutFlushesEachBatch(t *testing.T) {
	var out bytes.Buffer
	s, err := New(Options{Path: "-", Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: []point{{1, "a"}}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"x\":1,\"y\":\"a\"}\n" {
		t.Errorf("after one batch stdout has %q", out.String())
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestSinkErrors(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("empty path accepted")
	}
	// A missing directory is created; a path under a regular file cannot be.
	dir := t.TempDir()
	if s, err := New(Options{Path: filepath.Join(dir, "new", "out.jsonl")}); err != nil {
		t.Errorf("missing directory not created: %v", err)
	} else {
		s.Close(t.Context())
	}
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	if _, err := New(Options{Path: filepath.Join(blocker, "out")}); err == nil {
		t.Error("unwritable path accepted")
	}
	s, err := New(Options{Path: "-", Stdout: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	err = s.Write(t.Context(), tracecast.Batch{Items: []any{math.Inf(1)}})
	if err == nil || !strings.Contains(err.Error(), "jsonl sink stdout") {
		t.Errorf("unencodable value: err = %v", err)
	}
}

func BenchmarkAppendEntity(b *testing.B) {
	e := tracecast.Entity{Nature: tracecast.NatureState, Container: "CPU12", Type: "Worker State", Start: 12345.678,
		End: 12346.01, Imbrication: 0, Value: "dgemm"}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEntity(buf[:0], &e)
	}
	b.SetBytes(int64(len(buf)))
}

// filled returns a one-record batch of rt's type with every string field
// set to s, numbers to 1.5 or 3, bools true and times to a UTC instant.
func filled(rt tracecast.RecordType, s string) any {
	items := reflect.MakeSlice(rt.Items, 1, 1)
	v := items.Index(0)
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Float64, reflect.Float32:
			f.SetFloat(1.5)
		case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint8:
			if f.CanInt() {
				f.SetInt(3)
			} else {
				f.SetUint(1)
			}
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)))
			}
		}
	}
	return items.Interface()
}

// TestEveryRecordTypeCarriesItsName: the sink writes every record type of
// the registry with "record" (the type's name) first, as valid JSON,
// without HTML escaping; and AppendRecord (the Kafka sink's encoder)
// writes the same bytes.
func TestEveryRecordTypeCarriesItsName(t *testing.T) {
	for _, rt := range tracecast.RecordTypes() {
		t.Run(rt.Name, func(t *testing.T) {
			var out bytes.Buffer
			s, err := New(Options{Path: "-", Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			items := filled(rt, "idle>=25% <&>")
			if err := s.Write(t.Context(), tracecast.Batch{Items: items}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSuffix(out.String(), "\n")
			if !strings.HasPrefix(line, `{"record":"`+rt.Name+`",`) || !json.Valid([]byte(line)) {
				t.Errorf("%s", line)
			}
			hasString := rt.Name != "sample" // k, t, x
			if strings.Contains(line, `\u00`) || hasString != strings.Contains(line, "idle>=25% <&>") {
				t.Errorf("escaped: %s", line)
			}
			var direct []byte
			err = rt.Each(items, func(rec any, _ string) error {
				direct, err = AppendRecord(nil, rec)
				return err
			})
			if err != nil || string(direct) != line {
				t.Errorf("AppendRecord: %s, %v; the sink wrote %s", direct, err, line)
			}
		})
	}
}
