package starpudir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Dir is a sampling directory read: the raw files and the model files of
// version 45, and the files skipped with the reason.
type Dir struct {
	// Codelets is the directory read: .../sampling/codelets.
	Codelets string
	Raw      []*Raw
	Models   []*Model
	Skipped  []Skipped
}

// Skipped is a file Open did not read, and why.
type Skipped struct {
	Path   string
	Reason string
	// Backup is true for a backup WriteModel made (not an error).
	Backup bool
}

// backupRE matches WriteModel's backups.
var backupRE = regexp.MustCompile(`\.bak(\.[0-9]+)?$`)

// Codelets finds the codelets directory from what a user may give: the
// directory itself, $STARPU_HOME (holding .starpu/sampling/codelets),
// .starpu, or .starpu/sampling.
func Codelets(dir string) (string, error) {
	for _, sub := range []string{"", "codelets", filepath.Join("sampling", "codelets"), filepath.Join(".starpu", "sampling", "codelets")} {
		c := filepath.Join(dir, sub)
		if isDir(filepath.Join(c, "tmp")) || isDir(filepath.Join(c, strconv.Itoa(Version))) {
			return c, nil
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no StarPU sampling directory here (want DIR/.starpu/sampling/codelets/ with tmp/ or %d/: DIR is $STARPU_HOME, $HOME by default)", dir, Version)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Open reads the sampling directory under dir (Codelets): every
// tmp/*.out and every file of 45/. A file that cannot be read as StarPU
// writes it is in Skipped, with the reason; other version directories
// (44/, ...) are listed there too. Only a directory that is not a
// sampling directory is an error.
func Open(dir string) (*Dir, error) {
	c, err := Codelets(dir)
	if err != nil {
		return nil, err
	}
	d := &Dir{Codelets: c}
	if ents, err := os.ReadDir(filepath.Join(c, "tmp")); err == nil {
		for _, e := range ents {
			p := filepath.Join(c, "tmp", e.Name())
			switch {
			case e.IsDir():
				d.skip(p, "a directory")
			case !strings.HasSuffix(e.Name(), ".out"):
				d.skip(p, "not a raw measurement file (NAME.out)")
			default:
				r, err := ReadRaw(p)
				if err != nil {
					d.skipErr(p, err)
					continue
				}
				d.Raw = append(d.Raw, r)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		d.skip(filepath.Join(c, "tmp"), err.Error())
	}
	ents, err := os.ReadDir(c)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		p := filepath.Join(c, e.Name())
		switch {
		case e.Name() == "tmp":
		case e.Name() == strconv.Itoa(Version):
			d.readModels(p)
		case e.IsDir():
			if _, err := strconv.Atoi(e.Name()); err == nil {
				d.skip(p, fmt.Sprintf("performance models of version %s: only version %d (StarPU 1.3, 1.4) is read", e.Name(), Version))
			}
		}
	}
	sort.Slice(d.Skipped, func(i, j int) bool { return d.Skipped[i].Path < d.Skipped[j].Path })
	return d, nil
}

func (d *Dir) readModels(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		d.skip(dir, err.Error())
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			d.skip(p, "a directory")
		case backupRE.MatchString(e.Name()):
			d.Skipped = append(d.Skipped, Skipped{Path: p, Reason: "a backup written by fit-model --write-back", Backup: true})
		case strings.HasPrefix(e.Name(), "."):
			d.skip(p, "a hidden file")
		case strings.HasSuffix(e.Name(), ".tmp"):
			d.skip(p, "a temporary file (a write interrupted before it was renamed)")
		default:
			m, err := ReadModel(p)
			if err != nil {
				d.skipErr(p, err)
				continue
			}
			d.Models = append(d.Models, m)
		}
	}
}

func (d *Dir) skip(path, reason string) {
	d.Skipped = append(d.Skipped, Skipped{Path: path, Reason: reason})
}

// skipErr records a file whose reading failed: the error names the file
// (and line), which the reason does not repeat.
func (d *Dir) skipErr(path string, err error) {
	msg := strings.TrimPrefix(err.Error(), path)
	msg = strings.TrimPrefix(msg, ": ")
	if strings.HasPrefix(msg, ":") { // ":LINE: reason"
		msg = "line " + strings.TrimPrefix(msg, ":")
	}
	d.skip(path, msg)
}

// ModelsOf are the model files of a symbol (one per host).
func (d *Dir) ModelsOf(symbol string) []*Model {
	var out []*Model
	for _, m := range d.Models {
		if m.Symbol == symbol {
			out = append(out, m)
		}
	}
	return out
}

// RawOf is the raw file of a symbol, or nil.
func (d *Dir) RawOf(symbol string) *Raw {
	for _, r := range d.Raw {
		if r.Symbol == symbol {
			return r
		}
	}
	return nil
}

// Backups is how many of Skipped are WriteModel's backups.
func (d *Dir) Backups() int {
	n := 0
	for _, s := range d.Skipped {
		if s.Backup {
			n++
		}
	}
	return n
}
