// Package report holds tracecast's rendered analysis reports: what a run's
// analysis becomes for a person (a terminal table, plots) and for other
// tools (model.json, Arrow tables).
//
// Energy today: Energy is built from the energy stage's full result
// (stages/energy.Result) and the given or fitted per-state powers of seed
// 000's model; it renders as the table `tracecast energy` prints and, in an
// output directory, as energy.arrow, totals.arrow, model.json and the
// energy and power plots. Task models (tracecast fit-model): the table of
// each group's model, training fit and cross-validation against the
// baselines, and measured-vs-predicted and residual plots. An HTML report
// is to come here too.
//
// The demo's summary: Replay and Predictions summarize what the demo's
// pipelines wrote (their JSON-lines outputs); WriteDemo renders them.
//
// The package computes and renders; it does not read traces or power
// streams (the pipeline's components do) and prints nothing by itself: the
// caller gives the writer.
package report
