package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		describe string // make build's -ldflags
		want     string
	}{
		{nil, "", "v1.2.3 go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "", "v1.2.3 (rev 0123456789ab) go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "", "v1.2.3 (rev abc, modified) go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}, "", "v1.2.3 go1.26"},
		// go build recorded nothing (a worktree, -buildvcs=false): git describe.
		{nil, "0123456789ab", "v1.2.3 (rev 0123456789ab) go1.26"},
		{nil, "0123456789ab-dirty", "v1.2.3 (rev 0123456789ab, modified) go1.26"},
		{nil, "v0.3.0-14-g0123456789ab", "v1.2.3 (rev v0.3.0-14-g0123456789ab) go1.26"},
		// What go build recorded wins.
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210"}, {Key: "vcs.modified", Value: "false"}}, "0123456789ab-dirty", "v1.2.3 (rev fedcba987654) go1.26"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.3"}, Settings: tc.settings}
		if got := format(bi, tc.describe); got != tc.want {
			t.Errorf("%v %q: %q, want %q", tc.settings, tc.describe, got, tc.want)
		}
	}
	if v := Version(); !strings.Contains(v, "go1.") {
		t.Errorf("Version() = %q", v)
	}
}
