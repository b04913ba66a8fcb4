package specs

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/report"
)

// The report's single pass: its page needs the run's survey (which rules
// select states, the containers, the run's span) before the first state
// is drawn, and the survey needs the whole trace. Most traces say it
// early: the containers are created and the task counts first set within
// their first kilobytes, and the last state ends at the last event's
// time. So the report guesses the survey from the file's beginning and
// end, reads the file once, collecting the page on the guess while
// surveying, and reads it a second time only where the survey it made is
// not the guess (report.PageGuess): the page is the same either way.
var (
	// guessHead is how much of the file's beginning the guess reads
	// (0: no guess, two passes): 7 ms of parsing, against the whole read
	// it saves.
	guessHead = 1 << 20
	// guessTail is how much of its end it reads for the last time.
	guessTail = 64 << 10
)

// guessPage guesses the survey of a plain (not compressed) trace file:
// nil when it cannot (a compressed file, a bad line in the head, no
// state there, no time at the end).
func guessPage(t Trace, rules string) *report.PageGuess {
	if guessHead <= 0 {
		return nil
	}
	f, err := os.Open(t.Path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	head := make([]byte, min(fi.Size(), int64(guessHead)))
	if _, err := io.ReadFull(f, head); err != nil || len(head) < 2 || head[0] == 0x1f && head[1] == 0x8b {
		return nil
	}
	tail := head
	if fi.Size() > int64(len(head)) {
		tail = make([]byte, min(fi.Size(), int64(guessTail)))
		if _, err := f.ReadAt(tail, fi.Size()-int64(len(tail))); err != nil {
			return nil
		}
	} else {
		tail = append([]byte{'\n'}, head...) // TailTime takes tail's first line as cut
	}
	end, ok := paje.TailTime(head, tail, t.NoStrict)
	if !ok {
		return nil
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	survey, err := report.NewPageSurvey(rules)
	if err != nil {
		return nil
	}
	l := t.Limits
	if l == (paje.Limits{}) {
		l = paje.DefaultLimits()
	}
	o := paje.DefaultOptions()
	// The head ends in the middle of the run: links begun there end
	// after it (an error at the end of a trace).
	o.Name, o.Lenient, o.NoStrict, o.Threads, o.IgnoreIncompleteLinks = t.Path, t.Lenient, t.NoStrict, 1, true
	o.MaxBuffered, o.MaxLineBytes, o.MaxContainers, o.MaxOpenStates, o.MaxTypes = l.MaxBuffered, l.MaxLineBytes, l.MaxContainers, l.MaxOpenStates, l.MaxTypes
	if _, err := paje.Read(bytes.NewReader(head), o, func(es []tracecast.Entity) error {
		return survey.Write(context.Background(), tracecast.Batch{Items: es})
	}); err != nil {
		return nil
	}
	g, ok := survey.Guess(end)
	if !ok {
		return nil
	}
	return g
}
