package tracecast_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules keeps the layers apart: what reads input knows nothing of
// formats or analyses, a parser knows no other parser, an output knows no
// analysis, and no package depends on the command line. Dependencies run
// one way: the runtime and the component SDK (pipelines/) sit below the
// components (ingest/, parsers/, stages/, sinks/), which sit below what
// assembles them (app/: the built-in registry, the commands' pipelines).
// The rules hold for the packages' own code; the runtime's tests run real
// pipelines with the built-in components (pipelines/registry_test.go).
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	const mod = "github.com/tracecast/tracecast/"
	cmd := exec.Command("go", "list", "-deps=false", "-json", "./...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath  string
		Imports     []string
		TestImports []string
		Doc         string
		Name        string
	}
	rules := []struct {
		from, to, why string
		same          bool // to may be from itself (a parser may import its own subpackages)
	}{
		{"ingest/", "parsers/", "ingest reads bytes; formats are the parsers'", false},
		{"ingest/", "stages/", "ingest reads bytes; analyses are the stages'", false},
		{"parsers/", "parsers/", "a parser does not import another parser", true},
		{"sinks/", "stages/", "sinks write records; they do not know analyses", false},
		{"", "cmd/", "nothing imports the command line", false},
	}
	for _, below := range []string{"pipelines", "ingest/", "parsers/", "stages/", "sinks/"} {
		rules = append(rules, struct {
			from, to, why string
			same          bool
		}{below, "app/", "app/ assembles the components and the runtime: nothing below imports it", false})
	}
	for _, comp := range []string{"ingest/", "parsers/", "stages/", "sinks/"} {
		rules = append(rules, struct {
			from, to, why string
			same          bool
		}{"pipelines", comp, "the runtime and the component SDK sit below the components", false})
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(p.ImportPath, mod)
		if p.Doc == "" && p.Name != "main" {
			t.Errorf("%s: no package doc comment", rel)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			to := strings.TrimPrefix(imp, mod)
			for _, r := range rules {
				if !strings.HasPrefix(rel, r.from) || !strings.HasPrefix(to, r.to) {
					continue
				}
				if r.same && topDir(rel, r.from) == topDir(to, r.to) {
					continue
				}
				t.Errorf("%s imports %s: %s", rel, to, r.why)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list found only %d packages", n)
	}
}

// topDir is the first path element under prefix: parsers/paje/x → paje.
func topDir(path, prefix string) string {
	d, _, _ := strings.Cut(strings.TrimPrefix(path, prefix), "/")
	return d
}
