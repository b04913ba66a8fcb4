package paje

import (
	"testing"
)

const tailHead = `%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeSetState 3
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajeDestroyContainer 8
% Type string
% Name string
% Time date
%EndEventDef
0 W 0 Worker
`

func TestTailTime(t *testing.T) {
	for _, tc := range []struct {
		name, head, tail string
		want             float64
		ok               bool
	}{
		{"the latest of the whole lines", tailHead, "3 0.5 S w0 x\n3 7.25 S w0 Idle\n3 7.5 S w1 Idle\n", 7.5, true},
		{"the first line is taken as cut", tailHead, "3 9.5 S w0 x\n3 7.25 S w0 Idle\n", 7.25, true},
		{"the time where its definition puts it", tailHead, "\n8 W w0 12.5\n3 7.25 S w0 Idle\n", 12.5, true},
		{"a last line without its newline is cut", tailHead, "\n3 7.25 S w0 Idle\n3 8", 7.25, true},
		{"unknown events, bad counts and bad times passed over", tailHead, "\n9 10 x\n3 11 S\n3 abc S w0 Idle\n3 2 S w0 \"Idle\"\n", 2, true},
		{"no time", tailHead, "\n0 W 0 X\n", 0, false},
		{"a header going on past the head", tailHead[:40], "\n3 1 S w0 Idle\n", 0, false},
		{"no header", "3 1 S w0 Idle\n", "\n3 1 S w0 Idle\n", 0, false},
		{"a bad definition", "%EventDef PajeSetState 3\n% Time nonsense\n%EndEventDef\n", "\n3 1 S w0 Idle\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TailTime([]byte(tc.head), []byte(tc.tail), false)
			if ok != tc.ok || ok && got != tc.want {
				t.Errorf("TailTime = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzTailTime: no head or tail makes TailTime fail other than by saying
// it could not tell.
func FuzzTailTime(f *testing.F) {
	f.Add([]byte(tailHead), []byte("3 0.5 S w0 x\n3 7.25 S w0 Idle\n"))
	f.Add([]byte(tailHead), []byte("\n8 W w0 12.5\n"))
	f.Add([]byte("%EventDef PajeSetState 3\n% Time date\n"), []byte("\n3 1e999 S w0 Idle\n"))
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		if got, ok := TailTime(head, tail, false); ok && !(got <= MaxTime && got >= -MaxTime) {
			t.Errorf("TailTime = %v, true", got)
		}
	})
}
