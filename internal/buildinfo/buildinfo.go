// Package buildinfo names the running binary's build — module version, VCS
// revision and Go version — from what go build records in it.
package buildinfo

import "runtime/debug"

// Version is the binary's module version and the VCS revision it was built
// from, e.g. "v0.0.0-... (rev 1a2b3c4d5e6f, modified) go1.26.8"; "unknown"
// without build information.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return format(bi)
}

func format(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " (rev " + rev + modified + ")"
	}
	return v + " " + bi.GoVersion
}
