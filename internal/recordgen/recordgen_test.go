package recordgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = `package tracecast

import (
	"encoding/json"
	"time"
)

var recordTypes = []RecordType{
	declare[Rec]("rec", "recs", "tracecast.rec/2", nil, "A record " + "of tests."),
}
`

func write(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rec.go"), []byte(header+src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGenerate: a record of every kind of field gets its encoder, its
// Absent method and its schema (types, nulls, keywords, the conditional).
func TestGenerate(t *testing.T) {
	dir := write(t, "type Rec struct {\n"+
		"\tName  string `json:\"name\" desc:\"a name\" schema:\"enum=a|b\"`\n"+
		"\tOn    bool `json:\"on\" desc:\"on\"`\n"+
		"\tN     int `json:\"n\" tracecast:\"nullable\" desc:\"n; null when negative\" schema:\"minimum=0\"`\n"+
		"\tX     float64 `json:\"x\" tracecast:\"nullable\" nullif:\"on=false\" desc:\"x\" schema:\"minimum=0,maximum=1\"`\n"+
		"\tAt    time.Time `json:\"at\" desc:\"when\"`\n"+
		"\tRaw   json.RawMessage `json:\"raw\" desc:\"raw\" schema:\"type=array,items=string\"`\n"+
		"\tM     map[string]float64 `json:\"m\" desc:\"m\"`\n"+
		"\tE     *float64 `json:\"e\" desc:\"e\"`\n"+
		"\tSkip  int `json:\"-\"`\n"+
		"\tlocal int\n}\n")
	files, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[GoFile])
	for _, want := range []string{
		"func (r Rec) AppendJSON(b []byte) []byte {",
		"if r.N < 0 {\n\t\tb = appendNull(b, \"n\")",
		"if !r.On {\n\t\tb = appendNull(b, \"x\")",
		`b = appendTime(b, "at", r.At)`, `b = appendRawJSON(b, "raw", r.Raw)`, `b = appendFloatMap(b, "m", r.M)`, `b = appendOptF(b, "e", r.E)`,
		"func (r *Rec) Absent(column string) bool {\n\tswitch column {\n\tcase \"x\":\n\t\treturn !r.On",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	if strings.Contains(src, "Skip") || strings.Contains(src, "local") {
		t.Errorf("json:\"-\" or unexported fields encoded:\n%s", src)
	}
	var doc map[string]any
	if err := json.Unmarshal(files["docs/schemas/rec.json"], &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	got := func(path ...string) string {
		var v any = props
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, c := range [][2]string{
		{got("name", "enum"), `["a","b"]`},
		{got("n", "type"), `["integer","null"]`},
		{got("x", "maximum"), `1`},
		{got("at", "format"), `"date-time"`},
		{got("raw", "type"), `["array","null"]`},
		{got("raw", "items"), `{"type":"string"}`},
		{got("m", "additionalProperties"), `{"type":"number"}`},
		{got("e", "type"), `["number","null"]`},
	} {
		if c[0] != c[1] {
			t.Errorf("schema: %s, want %s", c[0], c[1])
		}
	}
	if doc["$id"] != "urn:tracecast:schema:rec:2" || doc["description"] != "A record of tests." {
		t.Errorf("$id %v, description %v", doc["$id"], doc["description"])
	}
	if b, _ := json.Marshal(doc["if"]); string(b) != `{"properties":{"on":{"const":false}}}` {
		t.Errorf("if %s", b)
	}
	if b, _ := json.Marshal(doc["required"]); string(b) != `["record","name","on","n","x","at","raw","m","e"]` {
		t.Errorf("required %s", b)
	}
}

// TestGenerateErrors: a declaration the generator cannot map says where
// and why.
func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct{ field, want string }{
		{"\tA string `desc:\"a\"`\n", "rec.go:12:2: Rec.A: no json tag"},
		{"\tA string `json:\"a\"`\n", "Rec.A: no desc tag"},
		{"\tA, B string `json:\"a\" desc:\"a\"`\n", "one field per line"},
		{"\tA []int `json:\"a\" desc:\"a\"`\n", "Rec.A: type []int has no output mapping"},
		{"\tA float64 `json:\"a\" nullif:\"b=1\" desc:\"a\"`\n", "nullif without tracecast:\"nullable\""},
		{"\tA float64 `json:\"a\" tracecast:\"nullable\" nullif:\"b=1\" desc:\"a\"`\n", "nullif names \"b\", not a field"},
		{"\tA float64 `json:\"a\" tracecast:\"nulable\" desc:\"a\"`\n", "tracecast:\"nulable\" is not nullable or jsonnull"},
		{"\tA float64 `json:\"a\" desc:\"a\" schema:\"minimum=x\"`\n", "schema minimum=\"x\" is not a number"},
		{"\tA float64 `json:\"a\" desc:\"a\" schema:\"pattern=x\"`\n", "schema keyword \"pattern\" unknown"},
	} {
		_, err := Generate(write(t, "type Rec struct {\n"+c.field+"}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.field, err, c.want)
		}
	}
}
