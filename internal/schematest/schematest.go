// Package schematest checks records against the JSON Schemas of
// docs/schemas/ (one per record type, draft 2020-12), for the tests that
// run real pipelines and commands: every JSON record tracecast writes must
// be valid against the schema its "record" field names.
package schematest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Dir is docs/schemas, found from this file's location.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "schemas")
}

// Schemas are the compiled schemas by record name, with the raw
// documents.
type Schemas struct {
	ByName map[string]*jsonschema.Schema
	Docs   map[string]map[string]any
}

// Load compiles every docs/schemas/NAME.json (format assertions on:
// emitted_at must be an RFC 3339 date-time).
func Load(t testing.TB) *Schemas {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Dir(), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s: %v", Dir(), err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	s := &Schemas{ByName: map[string]*jsonschema.Schema{}, Docs: map[string]map[string]any{}}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(f, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sch, err := c.Compile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s.ByName[name] = sch
		var raw map[string]any
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		s.Docs[name] = raw
	}
	return s
}

// Validate checks one JSON record against the schema its "record" field
// names and returns that name.
func (s *Schemas) Validate(line []byte) (string, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return "", fmt.Errorf("not JSON: %v", err)
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return "", fmt.Errorf("not a JSON object")
	}
	name, _ := obj["record"].(string)
	sch := s.ByName[name]
	if sch == nil {
		return name, fmt.Errorf("record %q: no schema (docs/schemas/%s.json)", name, name)
	}
	if err := sch.Validate(inst); err != nil {
		return name, fmt.Errorf("not valid against %s.json: %v", name, err)
	}
	return name, nil
}

// ValidateFile validates every line of a JSON-lines file and returns the
// number of records of each type. It fails the test on the first few
// invalid lines, naming them.
func (s *Schemas) ValidateFile(t testing.TB, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	bad := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		name, err := s.Validate(sc.Bytes())
		if err != nil {
			if bad++; bad <= 5 {
				t.Errorf("%s:%d: %v\n%.300s", path, n, err, sc.Bytes())
			}
			continue
		}
		counts[name]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if bad > 5 {
		t.Errorf("%s: %d invalid records in all", path, bad)
	}
	return counts
}
