package arrow

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// EntitySchemaName is the value of the "tracecast.schema" metadata key of
// entity outputs; bump it on any incompatible change of the columns.
const EntitySchemaName = "tracecast.entity/1"

// EntitySchema returns the schema of entity records (see the package
// documentation) with timeUnit as its "time_unit" metadata ("trace" when
// empty).
func EntitySchema(timeUnit string) *arrow.Schema {
	if timeUnit == "" {
		timeUnit = "trace"
	}
	md := arrow.NewMetadata([]string{"tracecast.schema", "time_unit"}, []string{EntitySchemaName, timeUnit})
	str := arrow.BinaryTypes.String
	f64 := arrow.PrimitiveTypes.Float64
	return arrow.NewSchema([]arrow.Field{
		{Name: "nature", Type: str},
		{Name: "container", Type: str},
		{Name: "type", Type: str},
		{Name: "start", Type: f64},
		{Name: "end", Type: f64},
		{Name: "duration", Type: f64},
		{Name: "imbrication", Type: arrow.PrimitiveTypes.Int32},
		{Name: "value", Type: str},
		{Name: "number", Type: f64, Nullable: true},
		{Name: "start_container", Type: str, Nullable: true},
		{Name: "end_container", Type: str, Nullable: true},
		{Name: "key", Type: str, Nullable: true},
		{Name: "extra", Type: str, Nullable: true},
	}, &md)
}

// EntityTable returns the table writing []tracecast.Entity batches with
// EntitySchema(timeUnit).
func EntityTable(timeUnit string) Table {
	return &entityTable{schema: EntitySchema(timeUnit)}
}

func bindEntity(b *array.RecordBuilder) func(*tracecast.Entity) {
	var (
		nature      = b.Field(0).(*array.StringBuilder)
		container   = b.Field(1).(*array.StringBuilder)
		typ         = b.Field(2).(*array.StringBuilder)
		start       = b.Field(3).(*array.Float64Builder)
		end         = b.Field(4).(*array.Float64Builder)
		duration    = b.Field(5).(*array.Float64Builder)
		imbrication = b.Field(6).(*array.Int32Builder)
		value       = b.Field(7).(*array.StringBuilder)
		number      = b.Field(8).(*array.Float64Builder)
		startC      = b.Field(9).(*array.StringBuilder)
		endC        = b.Field(10).(*array.StringBuilder)
		key         = b.Field(11).(*array.StringBuilder)
		extra       = b.Field(12).(*array.StringBuilder)
		scratch     []byte
	)
	return func(e *tracecast.Entity) {
		nature.Append(e.Nature.String())
		container.Append(e.Container)
		typ.Append(e.Type)
		start.Append(e.Start)
		end.Append(e.End)
		duration.Append(e.Duration())
		imbrication.Append(int32(e.Imbrication))
		value.Append(e.Value)
		if e.Nature == tracecast.NatureVariable {
			number.Append(e.Number)
		} else {
			number.AppendNull()
		}
		if e.Nature == tracecast.NatureLink {
			startC.Append(e.StartContainer())
			endC.Append(e.EndContainer())
			key.Append(e.Key())
		} else {
			startC.AppendNull()
			endC.AppendNull()
			key.AppendNull()
		}
		if len(e.Extra()) == 0 {
			extra.AppendNull()
			return
		}
		scratch = jsonl.AppendFields(scratch[:0], e.Extra())
		extra.BinaryBuilder.Append(scratch) // copies; no string conversion
	}
}
