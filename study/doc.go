// Package study is Pallipuram et al.'s (2014) benchmarking study (Pallipuram, DiMarco,
// Taufer) as a library: per cluster size R and DAG size T, the largest window
// of the idle-worker signal whose successor still looks like it (the KS
// hit-rate between consecutive windows at a target, 95 %), which is the
// window the prediction phase uses.
//
// The study has three steps, each a function here:
//
//   - synthesize: a random DAG within the paper's Table I, run on R workers
//     and written as a StarPU 1.4 Paje trace with its metadata (SynthConfig,
//     WriteSynth; the generator itself is study/synth);
//   - train: every trace's idle signal is sampled, classified (§IV-B) and
//     swept over all candidate window sizes in one pass (AnalyzeTrace); per R
//     the (w, T, hit-rate) points are fitted by a polynomial surface of total
//     degree 4 and cut at the target hit-rate into the window-size model
//     (Train, Fit), with plots;
//   - reproduce: the whole study at a reduced scale in one process — training
//     traces synthesized into a pipe and analysed as they are written,
//     validation traces run through the prediction phase with the model's
//     window — ending in REPORT.md (Reproduce).
//
// ModelWindow (WindowFromModel, TasksInTrace) gives the window size for a
// trace from a model file (tracecast predict --model).
//
// It lives outside cmd/ so that it is tested as a package, not through the
// binary, and so that other front ends can run the study. It reads traces
// itself (parsers/paje, stages/signal) and writes only files; it reports
// through return values and the zerolog.Logger it is given, never on the
// terminal. Errors in the options are *UsageError, so that a front end can
// tell them from failures.
package study

// UsageError is an error in the options given to the study (a bad codelet
// list, too few tasks, an impossible DAG, a sampling period that cannot be
// used), as opposed to a failure while running it. The CLI exits with code 2
// on these. The messages name the CLI flags, which have the options' names.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErr(err error) error { return &UsageError{Err: err} }

// firstErr is a when it is not nil, else b: the first failure is the one
// reported, the later ones (closing files after it) are consequences.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
