package clidoc

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	a := &cobra.Command{Use: "a", Short: "does a", Run: func(*cobra.Command, []string) {}}
	a.Flags().Int("threads", runtime.GOMAXPROCS(0), "goroutines")
	b := &cobra.Command{Use: "b", Short: "does b", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(a, b)
	return root
}

// Generate writes a page per command and an index by group, with no date
// and no machine-dependent default; the pages of commands that are gone go.
func TestGenerate(t *testing.T) {
	root := tree()
	Apply(root, []Group{{ID: "x", Title: "X things:", Commands: []string{"a", "b"}}})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool_gone.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Generate(root, dir, map[string]bool{"threads": true}); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(dir, "tool_a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(a), "(default the number of cores)") || strings.Contains(string(a), "Auto generated") {
		t.Errorf("tool_a.md:\n%s", a)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(idx), "## X things\n\n* [a](tool_a.md): does a\n* [b](tool_b.md): does b\n") {
		t.Errorf("README.md:\n%s", idx)
	}
	if _, err := os.Stat(filepath.Join(dir, "tool_gone.md")); err == nil {
		t.Error("tool_gone.md was kept")
	}
}

// Apply panics on a command in no group and on a group naming no command.
func TestApplyPanics(t *testing.T) {
	for name, groups := range map[string][]Group{
		"ungrouped": {{ID: "x", Title: "X:", Commands: []string{"a"}}},
		"unknown":   {{ID: "x", Title: "X:", Commands: []string{"a", "b", "c"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			Apply(tree(), groups)
		}()
	}
}
