package arrow

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracecast/tracecast"
)

// SampleSchemaName is the "tracecast.schema" metadata of signal outputs.
const SampleSchemaName = "tracecast.signal/1"

// SampleSchema is the schema of an occurrence signal: k (int64), t (float64,
// trace time units), x (int32). The metadata records the class, the period,
// the number of selected containers R and the time unit, so the file is
// self-describing.
func SampleSchema(meta map[string]string) *arrow.Schema {
	keys, values := []string{"tracecast.schema"}, []string{SampleSchemaName}
	for k, v := range meta {
		keys, values = append(keys, k), append(values, v)
	}
	md := arrow.NewMetadata(keys, values)
	return arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "t", Type: arrow.PrimitiveTypes.Float64},
		{Name: "x", Type: arrow.PrimitiveTypes.Int32},
	}, &md)
}

// SampleTable writes []tracecast.Sample batches with SampleSchema(meta).
func SampleTable(meta map[string]string) Table {
	return NewTable(SampleSchema(meta), func(b *array.RecordBuilder) func(*tracecast.Sample) {
		k := b.Field(0).(*array.Int64Builder)
		t := b.Field(1).(*array.Float64Builder)
		x := b.Field(2).(*array.Int32Builder)
		return func(s *tracecast.Sample) {
			k.Append(s.K)
			t.Append(s.T)
			x.Append(s.X)
		}
	})
}
