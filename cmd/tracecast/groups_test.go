package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracecast/tracecast/internal/clidoc"
)

// commandDocsDir is where the command reference is committed.
const commandDocsDir = "../../docs/commands"

// TestCommandDocs fails when the committed command reference is not what
// the commands generate: a flag, a help text or a command changed without
// `make docs`.
func TestCommandDocs(t *testing.T) {
	dir := t.TempDir()
	if err := clidoc.Generate(newRootCmd(), dir, perCore); err != nil {
		t.Fatal(err)
	}
	names := func(d string) []string {
		es, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	want, have := names(dir), names(commandDocsDir)
	stale := false
	for _, n := range want {
		got, err := os.ReadFile(filepath.Join(commandDocsDir, n))
		if err != nil {
			t.Errorf("docs/commands/%s is missing", n)
			stale = true
			continue
		}
		gen, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, gen) {
			t.Errorf("docs/commands/%s is not what the commands generate", n)
			stale = true
		}
	}
	for _, n := range have {
		if !slices.Contains(want, n) {
			t.Errorf("docs/commands/%s documents no command", n)
			stale = true
		}
	}
	if stale {
		t.Log("regenerate the reference: make docs (go run ./cmd/tracecast gen-docs docs/commands), and commit it")
	}
}

// TestCommandGroups: every command of `tracecast --help` is under a
// heading, and the headings are those of commandGroups, in order.
func TestCommandGroups(t *testing.T) {
	root := newRootCmd()
	var ids []string
	for _, g := range root.Groups() {
		ids = append(ids, g.ID)
	}
	var want []string
	for _, g := range commandGroups {
		want = append(want, g.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("groups %q, want %q", ids, want)
	}
	for _, c := range root.Commands() {
		if c.GroupID == "" && c.IsAvailableCommand() && c.Name() != "completion" {
			t.Errorf("%s is in no group", c.Name())
		}
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, g := range commandGroups {
		if !bytes.Contains(out.Bytes(), []byte("\n"+g.Title+"\n")) {
			t.Errorf("--help has no heading %q:\n%s", g.Title, out.String())
		}
	}
}
