package specs

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/report"
	bstage "github.com/tracecast/tracecast/stages/backfill"
	stage "github.com/tracecast/tracecast/stages/forecast"
)

// One pass where two were needed. The report's page needs the run's
// survey (which rules select states, the containers, the run's span)
// before the first state is drawn, and predict needs R and the run's span
// (its default horizons) before the first forecast; only the whole trace
// says them. Most traces say them early: the containers are created and
// the task counts first set within their first kilobytes, and the last
// state ends at the last event's time. So the report and predict guess
// them from the file's beginning and end, read the file once on the guess
// while measuring them, and read it a second time only where what they
// measured is not the guess (report.PageGuess; predict: predictOnce):
// the output is the same either way.
var (
	// guessHead is how much of the file's beginning the guess reads
	// (0: no guess, two passes): 7 ms of parsing, against the whole read
	// it saves.
	guessHead = 1 << 20
	// guessTail is how much of its end it reads for the last time.
	guessTail = 64 << 10
)

// fileHead reads the beginning of a plain (not compressed) trace file,
// cut after its last whole line, and the latest time of its end
// (paje.TailTime): ok false when it cannot (a compressed file, no
// header in the head, no time at the end).
func fileHead(t Trace) (head []byte, end float64, ok bool) {
	if guessHead <= 0 {
		return nil, 0, false
	}
	f, err := os.Open(t.Path)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, 0, false
	}
	head = make([]byte, min(fi.Size(), int64(guessHead)))
	if _, err := io.ReadFull(f, head); err != nil || len(head) < 2 || head[0] == 0x1f && head[1] == 0x8b {
		return nil, 0, false
	}
	var tail []byte
	if fi.Size() > int64(len(head)) {
		tail = make([]byte, min(fi.Size(), int64(guessTail)))
		if _, err := f.ReadAt(tail, fi.Size()-int64(len(tail))); err != nil {
			return nil, 0, false
		}
	} else {
		tail = append([]byte{'\n'}, head...) // TailTime takes tail's first line as cut
	}
	if end, ok = paje.TailTime(head, tail, t.NoStrict); !ok {
		return nil, 0, false
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	return head, end, true
}

// readHead parses a file's head (fileHead) with the trace's options into
// sink, Close included.
func readHead(t Trace, head []byte, sink tracecast.Sink) error {
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
		return sink.Write(context.Background(), tracecast.Batch{Items: es, Watermark: math.NaN()})
	}); err != nil {
		return err
	}
	return sink.Close(context.Background())
}

// guessPage guesses the report's survey of a trace file: nil when it
// cannot (fileHead's reasons, a bad line in the head, no state there).
func guessPage(t Trace, rules string) *report.PageGuess {
	head, end, ok := fileHead(t)
	if !ok {
		return nil
	}
	survey, err := report.NewPageSurvey(rules)
	if err != nil || readHead(t, head, survey) != nil {
		return nil
	}
	g, ok := survey.Guess(end)
	if !ok {
		return nil
	}
	return g
}

// guessSteps guesses what predict's first pass measures of a trace file
// (stage.StepsSink.FirstOnly: R, the start, the end): nil when it cannot.
func guessSteps(t Trace, rules, class string, workers int) *fc.Steps {
	head, end, ok := fileHead(t)
	if !ok {
		return nil
	}
	s := stage.NewStepsSink(rules, class, "", workers).FirstOnly()
	if readHead(t, head, s) != nil {
		return nil
	}
	steps, err := s.Steps()
	if err != nil || s.Unit() == "" {
		return nil
	}
	if end /= tracecast.PerSecond(s.Unit()); !(end >= steps.End) {
		return nil
	}
	steps.End = end
	return steps
}

// guessSurvey guesses backfill's first pass over a trace file (the rules,
// the time unit, the workers, the run's start): nil when it cannot.
func guessSurvey(t Trace, rules string) *bstage.Survey {
	head, _, ok := fileHead(t)
	if !ok {
		return nil
	}
	s := bstage.NewSurvey(rules, "")
	if readHead(t, head, s) != nil || s.Err() != nil {
		return nil
	}
	return s
}

// moveInto renames every file of the temporary directory tmp into dir
// (the same filesystem: tmp is made inside dir).
func moveInto(tmp, dir string) error {
	files, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Rename(filepath.Join(tmp, f.Name()), filepath.Join(dir, f.Name())); err != nil {
			return err
		}
	}
	return nil
}
