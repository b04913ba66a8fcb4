// Package buildinfo names the running binary's build — module version, VCS
// revision and Go version — from what go build records in it.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// describe is `git describe --always --dirty --abbrev=12` of the checkout,
// set by make build (-ldflags -X): the revision where go build records
// none (GOFLAGS=-buildvcs=false, a linked git worktree, whose .git is a
// file, which go does not recognise).
var describe string

// Version is the binary's module version and the VCS revision it was built
// from, e.g. "v0.0.0-... (rev 1a2b3c4d5e6f, modified) go1.26.8" — the one
// go build recorded, else the one make build passed; "unknown" without
// build information.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return format(bi, describe)
}

func format(bi *debug.BuildInfo, describe string) string {
	v := bi.Main.Version
	var rev, modified string
	if d, dirty := strings.CutSuffix(describe, "-dirty"); d != "" {
		rev = d
		if dirty {
			modified = ", modified"
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = ""
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if len(rev) > 12 && !strings.Contains(rev, "-") { // a hash, not git describe's tag-n-ghash
		rev = rev[:12]
	}
	if rev != "" {
		v += " (rev " + rev + modified + ")"
	}
	return v + " " + bi.GoVersion
}
