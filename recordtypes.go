package tracecast

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// RecordType is one kind of record tracecast emits, declared once, here: the
// name a JSON record or a Kafka header carries, the plural a sink's
// `records:` option takes, the versioned schema name (Arrow metadata
// "tracecast.schema", Kafka "schema"), and the Go type of its batches. The
// encoders (Arrow, JSON lines, Kafka) look record types up here instead of
// keeping tables of their own.
//
// A record type's fields are declared once, in its Go struct with tags
// (json, tracecast, nullif, desc, schema: internal/recordgen says what
// each means); `go generate` derives its JSON encoder (records_gen.go),
// its Absent method and its JSON Schema (docs/schemas) from them, and
// sinks/arrow its Arrow and Parquet columns. TestGeneratedRecords fails
// when the generated files are stale.
type RecordType struct {
	// Name is the singular name: "prediction".
	Name string
	// Plural names a sink's record filter: "predictions".
	Plural string
	// Schema is the versioned schema name: "tracecast.prediction/1".
	Schema string
	// Items is the type of a batch's Items: []Prediction.
	Items reflect.Type
	// Doc says what a record is: its JSON Schema's description.
	Doc string
	// each calls fn for every record of items with its trace id ("" when
	// the record has none): typed code, no reflection per record.
	each func(items any, fn func(rec any, trace string) error) error
}

// Each calls fn for every record of a batch of this type, with the record's
// trace id ("" for record types without one).
func (t RecordType) Each(items any, fn func(rec any, trace string) error) error {
	return t.each(items, fn)
}

// Partial is implemented by record types some of whose fields do not
// always apply (a first window's d, p and hit, which compare it with no
// window): Absent reports whether the field of that column name does not
// apply to this record. Every output writes null there — JSON, Arrow,
// Parquet — never a placeholder.
//
// The fields that can be absent are tagged `tracecast:"nullable"`: their
// Arrow and Parquet columns are nullable, and a NaN, a zero time or an
// empty string in one is null too (an empty forecast interval, an open
// episode's end, a rolling skill record's end).
type Partial interface {
	Absent(column string) bool
}

// declare declares a record type; doc (its description) makes
// internal/recordgen generate its encoder and schema from T's tags.
func declare[T any](name, plural, schema string, trace func(*T) string, doc ...string) RecordType {
	return RecordType{Name: name, Plural: plural, Schema: schema, Items: reflect.TypeFor[[]T](), Doc: strings.Join(doc, ""),
		each: func(items any, fn func(any, string) error) error {
			s := items.([]T)
			for i := range s {
				id := ""
				if trace != nil {
					id = trace(&s[i])
				}
				if err := fn(s[i], id); err != nil {
					return err
				}
			}
			return nil
		}}
}

// recordTypes lists every record type, in the order outputs document them.
var recordTypes = []RecordType{
	declare[Entity]("entity", "entities", "tracecast.entity/1", nil),
	declare[Sample]("sample", "samples", "tracecast.signal/1", nil,
		"One value of an event-occurrence signal: x of the selected containers were in the signal's class at t = t0 + k·period (trace time units; the signal's class, period, R, rules and t0 are in the Arrow/Parquet metadata)."),
	declare[Window]("window", "windows", "tracecast.window/1", func(r *Window) string { return r.Trace },
		"The Kolmogorov-Smirnov comparison of one window of a signal (samples [index·n, (index+1)·n), trace times [start, end)) with the window before it."),
	declare[Prediction]("prediction", "predictions", "tracecast.prediction/1", func(r *Prediction) string { return r.Trace },
		"From the ECDF of the last complete window: how likely the next window is to have at least at_least containers in class. Deterministic id: TRACE/w<window>/<query>."),
	declare[Verdict]("verdict", "verdicts", "tracecast.verdict/1", func(r *Verdict) string { return r.Trace },
		"Published when a predicted window completes: the KS test between the window a prediction came from and the one it predicted, and what was observed. Id: the prediction's with /verdict."),
	declare[Alert]("alert", "alerts", "tracecast.alert/1", func(r *Alert) string { return r.Trace },
		"An idle opportunity (a prediction's likelihood at or above a threshold) or a regime change (consecutive KS misses). Deterministic id: TRACE/w<window>/<kind>/<query>."),
	declare[Forecast]("forecast", "forecasts", "tracecast.forecast/1", func(r *Forecast) string { return r.Run },
		"A forecast of idle capacity issued at issued_at for the next horizon seconds (docs/forecasts.md)."),
	declare[Outcome]("outcome", "outcomes", "tracecast.outcome/1", func(r *Outcome) string { return r.Run },
		"What happened over a forecast's interval, published once it is over. Id: the forecast's with /outcome."),
	declare[Episode]("episode", "episodes", "tracecast.episode/1", func(r *Episode) string { return r.Run },
		"An alert that lasts: announced when it opens (state open, end null) and again, under its own id, when it closes (state closed, with end)."),
	declare[Skill]("skill", "skills", "tracecast.skill/3", func(r *Skill) string { return r.Run },
		"A run's rolling verification of one (query, horizon) from the outcomes known so far; the last one of a run covers all its outcomes and says how the run ended (end)."),
	declare[Explanation]("explanation", "explanations", "tracecast.explanation/1", func(r *Explanation) string { return r.Run },
		"What carried a run's auto forecasts of one (query, horizon), at the run's end (predict --explain): the forecast's MSE, each expert's mean weight in the mix and MSE, each feature of the learner's permutation importance; a feature the trace lacks is present false (docs/forecasts.md)."),
	declare[Decision]("decision", "decisions", "tracecast.decision/1", func(r *Decision) string { return r.Run },
		"A back-end task a backfill policy launched on an idle worker, and what became of it (docs/backfill.md)."),
	declare[SpellForecast]("spell", "spells", "tracecast.spell/2", func(r *SpellForecast) string { return r.Run },
		"A forecast of how much longer an idle worker stays idle, or a busy one busy (state), issued at issued_at when its spell had lasted elapsed seconds (docs/backfill.md)."),
	declare[Plan]("plan", "plans", "tracecast.plan/1", func(r *Plan) string { return r.Run },
		"The forecast backfill policy's plan for one idle worker and task length: the windows of elapsed idle in which a back-end task is worth launching; issued when a spell starts, when the windows change and when the spell or the run ends (docs/backfill.md)."),
	declare[EnergyRow]("energy", "energy", "tracecast.energy/1", nil,
		"The energy of one state class on one node in one window (or over the run), from an energy stage (docs/energy.md). Times in seconds."),
	declare[PowerSample]("power", "power", "tracecast.power/1", nil,
		"One power reading of one node (a power parser's record). Times in seconds."),
	declare[IOCall]("iocall", "iocalls", "tracecast.iocall/1", nil,
		"One completed I/O system call, with the names of the I/O-call JSON-lines input schema (docs/io.md), which the iocall parser reads back."),
	declare[Task]("task", "tasks", "tracecast.task/1", func(r *Task) string { return r.Run },
		"One task of a run (tracecast tasks): its codelet, worker, timing, numeric parameters and, with a power stream, energy; with a task model (the taskmodel stage), the predicted duration and energy. Id: RUN/JOB_ID."),
	declare[TaskModel]("taskmodel", "taskmodels", "tracecast.taskmodel/1", nil,
		"One group's model of a task metric (Eiger's construction: tracecast fit-model), published for schedulers. Id: TARGET/GROUP; keep the latest per id."),
	declare[HitRate]("hitrate", "hitrates", "tracecast.hitrate/1", func(r *HitRate) string { return r.Trace },
		"The KS hit-rate of consecutive windows of one size over a trace's signal (tracecast hitrate): how often a window's distribution was not told apart from the previous window's."),
	declare[KSTest]("kstest", "kstests", "tracecast.kstest/1", nil,
		"A two-sample Kolmogorov-Smirnov test of two samples of non-negative integers (tracecast ks)."),
}

var recordTypeByItems = func() map[reflect.Type]RecordType {
	m := map[reflect.Type]RecordType{}
	for _, t := range recordTypes {
		m[t.Items] = t
	}
	return m
}()

// RecordTypes returns every record type.
func RecordTypes() []RecordType { return slices.Clone(recordTypes) }

// RecordTypeOf returns the record type of a batch's Items.
func RecordTypeOf(items any) (RecordType, bool) {
	t, ok := recordTypeByItems[reflect.TypeOf(items)]
	return t, ok
}

// LookupRecordType returns the record type a sink's `records:` option names
// (its plural); the error lists the valid names.
func LookupRecordType(plural string) (RecordType, error) {
	names := make([]string, 0, len(recordTypes))
	for _, t := range recordTypes {
		if t.Plural == plural {
			return t, nil
		}
		names = append(names, t.Plural)
	}
	slices.Sort(names)
	return RecordType{}, fmt.Errorf("records: %q is not one of %s", plural, strings.Join(names, ", "))
}
