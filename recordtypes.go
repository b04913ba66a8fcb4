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
type RecordType struct {
	// Name is the singular name: "prediction".
	Name string
	// Plural names a sink's record filter: "predictions".
	Plural string
	// Schema is the versioned schema name: "tracecast.prediction/1".
	Schema string
	// Items is the type of a batch's Items: []Prediction.
	Items reflect.Type
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

func declare[T any](name, plural, schema string, trace func(*T) string) RecordType {
	return RecordType{Name: name, Plural: plural, Schema: schema, Items: reflect.TypeFor[[]T](),
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
	declare[Sample]("sample", "samples", "tracecast.signal/1", nil),
	declare[Window]("window", "windows", "tracecast.window/1", func(r *Window) string { return r.Trace }),
	declare[Prediction]("prediction", "predictions", "tracecast.prediction/1", func(r *Prediction) string { return r.Trace }),
	declare[Verdict]("verdict", "verdicts", "tracecast.verdict/1", func(r *Verdict) string { return r.Trace }),
	declare[Alert]("alert", "alerts", "tracecast.alert/1", func(r *Alert) string { return r.Trace }),
	declare[Forecast]("forecast", "forecasts", "tracecast.forecast/1", func(r *Forecast) string { return r.Run }),
	declare[Outcome]("outcome", "outcomes", "tracecast.outcome/1", func(r *Outcome) string { return r.Run }),
	declare[Episode]("episode", "episodes", "tracecast.episode/1", func(r *Episode) string { return r.Run }),
	declare[Skill]("skill", "skills", "tracecast.skill/2", func(r *Skill) string { return r.Run }),
	declare[Decision]("decision", "decisions", "tracecast.decision/1", func(r *Decision) string { return r.Run }),
	declare[SpellForecast]("spell", "spells", "tracecast.spell/1", func(r *SpellForecast) string { return r.Run }),
	declare[EnergyRow]("energy", "energy", "tracecast.energy/1", nil),
	declare[PowerSample]("power", "power", "tracecast.power/1", nil),
	declare[IOCall]("iocall", "iocalls", "tracecast.iocall/1", nil),
	declare[Task]("task", "tasks", "tracecast.task/1", func(r *Task) string { return r.Run }),
	declare[TaskModel]("taskmodel", "taskmodels", "tracecast.taskmodel/1", nil),
	declare[HitRate]("hitrate", "hitrates", "tracecast.hitrate/1", func(r *HitRate) string { return r.Trace }),
	declare[KSTest]("kstest", "kstests", "tracecast.kstest/1", nil),
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
