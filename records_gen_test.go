package tracecast

import (
	"bytes"
	"os"
	"testing"

	"github.com/tracecast/tracecast/internal/recordgen"
)

// TestGeneratedRecords: records_gen.go and docs/schemas are what
// internal/recordgen derives from the record types' declarations, and
// every record type but the entity (written by nature, by hand, in
// sinks/jsonl) is declared that way.
func TestGeneratedRecords(t *testing.T) {
	files, err := recordgen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run go generate in the repository's root", path, err)
		}
	}
	recs, err := recordgen.Parse(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch {
		case r.Name == "entity" || r.Generated():
		case r.HandWritten != "":
			t.Errorf("%s: AppendJSON written by hand in %s: tag %s's fields (json, desc, schema: see internal/recordgen), delete it and run go generate",
				r.Name, r.HandWritten, r.Type)
		default:
			t.Errorf("%s: its declare call (recordtypes.go) gives no description: its encoder and schema are not generated", r.Name)
		}
	}
}
