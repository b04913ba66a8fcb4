package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConflicts(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.trace")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, filepath.Join(dir, "link.trace")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, filepath.Join(dir, "hard.trace")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := func(p string) Use { return Use{Who: "source", Path: p} }
	w := func(who, p string) Use { return Use{Who: who, Path: p, Output: true} }
	tests := []struct {
		name string
		uses []Use
		want []string // substrings, one per error
	}{
		{"distinct", []Use{r("in.trace"), w("a", "out.jsonl"), w("b", "out.arrow")}, nil},
		{"same path", []Use{r("in.trace"), w("a", "in.trace")}, []string{"a writes in.trace, which source reads: it would destroy its input"}},
		{"absolute", []Use{r("in.trace"), w("a", in)}, []string{"which source reads"}},
		{"dot dot", []Use{r("in.trace"), w("a", "sub/../in.trace")}, []string{"which source reads"}},
		{"symlink", []Use{r("link.trace"), w("a", "in.trace")}, []string{"which source reads"}},
		{"hard link", []Use{r("hard.trace"), w("a", "in.trace")}, []string{"which source reads"}},
		{"symlinked dir, new file", []Use{w("a", "dirlink/new.jsonl"), w("b", "new.jsonl")}, []string{"a (dirlink/new.jsonl) and b (new.jsonl) write the same file"}},
		{"two outputs", []Use{w("a", "o.jsonl"), w("b", "o.jsonl"), w("c", "o.jsonl")}, []string{"a and b both write o.jsonl", "a and c both write", "b and c both write"}},
		{"standard streams", []Use{r("-"), w("a", "-"), w("b", "-")}, nil},
		{"devices", []Use{w("a", "/dev/null"), w("b", "/dev/null")}, nil},
		{"not yet existing dir", []Use{w("a", "nodir/x/o.arrow"), w("b", "./nodir/x/../x/o.arrow")}, []string{"write the same file"}},
	}
	for _, tt := range tests {
		errs := Conflicts(tt.uses)
		if len(errs) != len(tt.want) {
			t.Errorf("%s: %v, want %d errors", tt.name, errs, len(tt.want))
			continue
		}
		for i, e := range errs {
			if !strings.Contains(e.Error(), tt.want[i]) {
				t.Errorf("%s: %v, want %q", tt.name, e, tt.want[i])
			}
		}
	}
}

func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.trace")
	os.WriteFile(in, []byte("x"), 0o644)
	for _, tc := range []struct {
		outputs []string
		err     string
	}{
		{[]string{filepath.Join(dir, "out.csv")}, ""},
		{[]string{"-"}, ""},
		{[]string{in}, "-o writes " + in + ", which the command reads: it would destroy its input"},
		{[]string{filepath.Join(dir, "sub", "..", "in.trace")}, "which the command reads"},
	} {
		err := CheckOutputs([]string{in}, tc.outputs...)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: %v, want %q", tc.outputs, err, tc.err)
		}
	}
}

func TestInDirGiven(t *testing.T) {
	if InDir("") != nil {
		t.Error(`InDir("") is not empty`)
	}
	if got := InDir("d", "a", "b"); len(got) != 3 || got[0] != "d" || got[2] != filepath.Join("d", "b") {
		t.Errorf("InDir: %q", got)
	}
	if got := Given("", "a", "", "b"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Given: %q", got)
	}
}

// TestCheckNamed: two flags naming one file conflict, by their names.
func TestCheckNamed(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x")
	err := CheckNamed(Use{Who: "-o", Path: f}, Use{Who: "--dot", Path: f}, Use{Who: "--meta", Path: ""})
	if err == nil || !strings.Contains(err.Error(), "-o") || !strings.Contains(err.Error(), "--dot") {
		t.Errorf("CheckNamed: %v", err)
	}
	if err := CheckNamed(Use{Who: "-o", Path: f}, Use{Who: "--dot", Path: f + ".dot"}); err != nil {
		t.Errorf("CheckNamed, two files: %v", err)
	}
}
