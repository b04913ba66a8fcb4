package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, "v1.2.3 go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "v1.2.3 (rev 0123456789ab) go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "v1.2.3 (rev abc, modified) go1.26"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}, "v1.2.3 go1.26"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.3"}, Settings: tc.settings}
		if got := format(bi); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.settings, got, tc.want)
		}
	}
	if v := Version(); !strings.Contains(v, "go1.") {
		t.Errorf("Version() = %q", v)
	}
}
