// Package paths keeps a run's outputs from destroying its inputs: before
// anything is opened, every file a run writes is compared with every file
// it reads and with the other files it writes, by what they really are —
// absolute, cleaned, symbolic links resolved, and for files that exist the
// same inode (os.SameFile: hard links, bind mounts).
package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Use is one file a run reads or writes.
type Use struct {
	// Who names the user in messages: `sink "out"`, "-o".
	Who string
	// Path is the file as given; "" and "-" (standard input or output)
	// are not files.
	Path string
	// Output is set for a file the run creates, truncates or replaces.
	Output bool
}

// file is a Use resolved.
type file struct {
	Use
	real string      // absolute, symbolic links resolved as far as they exist
	info os.FileInfo // nil when the file does not exist (yet)
}

func resolve(u Use) file {
	f := file{Use: u, real: filepath.Clean(u.Path)}
	if abs, err := filepath.Abs(u.Path); err == nil {
		f.real = abs
	}
	// Resolve the longest existing prefix: the file, or its directory.
	dir, rest := f.real, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			f.real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	if fi, err := os.Stat(f.real); err == nil {
		f.info = fi
	}
	return f
}

func same(a, b file) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	return a.real == b.real
}

// Conflicts returns one error per output that is also an input, or that
// another output writes too. Devices (/dev/null, /dev/stdout) are not
// files a run can destroy and may be shared.
func Conflicts(uses []Use) []error {
	var fs []file
	for _, u := range uses {
		if u.Path == "" || u.Path == "-" {
			continue
		}
		fs = append(fs, resolve(u))
	}
	var errs []error
	for i, o := range fs {
		if !o.Output || o.info != nil && !o.info.Mode().IsRegular() && !o.info.IsDir() {
			continue
		}
		for j, x := range fs {
			if i == j || !same(o, x) {
				continue
			}
			switch {
			case !x.Output:
				errs = append(errs, fmt.Errorf("%s writes %s, which %s reads: it would destroy its input", o.Who, o.Path, x.Who))
			case j < i && x.Path == o.Path:
				errs = append(errs, fmt.Errorf("%s and %s both write %s: each would overwrite the other", x.Who, o.Who, o.Path))
			case j < i:
				errs = append(errs, fmt.Errorf("%s (%s) and %s (%s) write the same file: each would overwrite the other", x.Who, x.Path, o.Who, o.Path))
			}
		}
	}
	return errs
}

// CheckOutputs is Conflicts for a command: its inputs, and the files its -o
// writes (an output of "-" is standard output, never a conflict); nil, or
// the conflicts joined.
func CheckOutputs(inputs []string, outputs ...string) error {
	var uses []Use
	for _, in := range inputs {
		uses = append(uses, Use{Who: "the command", Path: in})
	}
	for _, out := range outputs {
		uses = append(uses, Use{Who: "-o", Path: out, Output: true})
	}
	return errors.Join(Conflicts(uses)...)
}

// CheckNamed is Conflicts for a command with several output flags, each
// Use naming its flag (Who) so that a conflict says which two flags write
// one file: every Use is an output.
func CheckNamed(uses ...Use) error {
	for i := range uses {
		uses[i].Output = true
	}
	return errors.Join(Conflicts(uses)...)
}

// InDir is what a command writes with -o DIR: DIR itself and the files
// names in it (none when dir is "").
func InDir(dir string, names ...string) []string {
	if dir == "" {
		return nil
	}
	outs := []string{dir}
	for _, n := range names {
		outs = append(outs, filepath.Join(dir, n))
	}
	return outs
}

// Given is the paths of ps that are given (not "").
func Given(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
