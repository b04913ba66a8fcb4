package pipelines

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/ingest/file"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/ingest/tail"
	"github.com/tracecast/tracecast/parsers/iocall"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/jsonl"
	kafkasink "github.com/tracecast/tracecast/sinks/kafka"
	"github.com/tracecast/tracecast/stages/iotime"
)

// RegisterBuiltins registers every built-in component type:
//
//	sources: file, tail, kafka
//	parsers: paje, iocall, power
//	stages:  signal, predict, iotime, energy
//	sinks:   jsonl, arrow, kafka
//
// Adding a component is one Register call here (stages go through
// RegisterStage).
func RegisterBuiltins(r *Registry) {
	RegisterSource(r, "file", DefaultFileSourceOptions, newFileSource)
	RegisterSource(r, "tail", nil, newTailSource)
	RegisterSource(r, "kafka", DefaultKafkaSourceOptions, newKafkaSource)
	RegisterParser(r, "paje", DefaultPajeOptions, newPajeParser)
	RegisterParser(r, "iocall", nil, newIOCallParser)
	RegisterParser(r, "power", nil, newPowerParser)
	RegisterStage(r, "signal", DefaultSignalOptions, newSignalStage)
	RegisterStage(r, "predict", DefaultPredictOptions, newPredictStage)
	RegisterStage(r, "iotime", nil, newIOTimeStage)
	RegisterStage(r, "energy", DefaultEnergyOptions, newEnergyStage)
	RegisterSink(r, "jsonl", nil, newJSONLSink)
	RegisterSink(r, "arrow", nil, newArrowSink)
	RegisterSink(r, "kafka", DefaultKafkaSinkOptions, newKafkaSink)
}

// recordTypes names the record types a sink can be restricted to with
// `records:`, so that one stage's several outputs (windows, predictions,
// verdicts, alerts) go to separate files.
var recordTypes = map[string]reflect.Type{
	"entities":    reflect.TypeFor[[]tracecast.Entity](),
	"samples":     reflect.TypeFor[[]tracecast.Sample](),
	"windows":     reflect.TypeFor[[]tracecast.Window](),
	"predictions": reflect.TypeFor[[]tracecast.Prediction](),
	"verdicts":    reflect.TypeFor[[]tracecast.Verdict](),
	"alerts":      reflect.TypeFor[[]tracecast.Alert](),
	"energy":      reflect.TypeFor[[]tracecast.EnergyRow](),
	"power":       reflect.TypeFor[[]tracecast.PowerSample](),
}

func checkRecords(r string) error {
	if _, ok := recordTypes[r]; r != "" && !ok {
		names := make([]string, 0, len(recordTypes))
		for n := range recordTypes {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("records: %q is not one of %s", r, strings.Join(names, ", "))
	}
	return nil
}

// filterSink passes on only the batches of one record type.
type filterSink struct {
	tracecast.Sink
	want reflect.Type
}

// Accepts tells the runtime which batches this sink keeps.
func (f filterSink) Accepts(b tracecast.Batch) bool { return reflect.TypeOf(b.Items) == f.want }

func (f filterSink) Write(ctx context.Context, b tracecast.Batch) error {
	if !f.Accepts(b) {
		return nil
	}
	return f.Sink.Write(ctx, b)
}

// DurableOnClose passes on the wrapped sink's answer.
func (f filterSink) DurableOnClose() bool {
	cd, ok := f.Sink.(tracecast.CloseDurable)
	return ok && cd.DurableOnClose()
}

func filtered(s tracecast.Sink, records string) tracecast.Sink {
	if records == "" {
		return s
	}
	return filterSink{Sink: s, want: recordTypes[records]}
}

// FileSourceOptions are the options of a "file" source.
type FileSourceOptions struct {
	// Path is the file to replay (plain or gzip), or "-" for standard input.
	Path string `yaml:"path"`
	// Speed is max (default), realtime or Nx: pacing by trace time.
	Speed string `yaml:"speed"`
	// MaxLineBytes is the longest accepted line (default 1 MiB).
	MaxLineBytes int `yaml:"max_line_bytes"`
	// BatchLines is the number of lines per batch (default 1024).
	BatchLines int `yaml:"batch_lines"`
	// StrictEOL makes a missing newline at the end of the file an error.
	StrictEOL bool `yaml:"strict_eol"`
	// TimeUnit is the unit of the trace's timestamps for pacing (s, ms, us,
	// ns), for parsers that do not know it; the paje parser does (its
	// time_unit, or detected from the header).
	TimeUnit string `yaml:"time_unit"`
}

// DefaultFileSourceOptions returns the defaults of a "file" source.
func DefaultFileSourceOptions() FileSourceOptions {
	return FileSourceOptions{Speed: "max", MaxLineBytes: file.DefaultMaxLineBytes, BatchLines: file.DefaultBatchLines}
}

// Validate checks the options.
func (o *FileSourceOptions) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("path: required (a file, or - for standard input)"))
	}
	if _, err := file.ParseSpeed(o.Speed); err != nil {
		errs = append(errs, fmt.Errorf("speed: %w", err))
	}
	if o.MaxLineBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_line_bytes: must be positive (got %d)", o.MaxLineBytes))
	}
	if o.BatchLines <= 0 {
		errs = append(errs, fmt.Errorf("batch_lines: must be positive (got %d)", o.BatchLines))
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && !ok {
		errs = append(errs, fmt.Errorf("time_unit: %q is not one of s, ms, us, ns", o.TimeUnit))
	}
	return errors.Join(errs...)
}

// StreamName is the file path, used by the parser in its messages.
func (o *FileSourceOptions) StreamName() string {
	if o.Path == "-" {
		return "stdin"
	}
	return o.Path
}

// fileSource adapts file.Source's progress to ProgressReporter.
type fileSource struct{ *file.Source }

func (s fileSource) SourceProgress() SourceProgress {
	p := s.Progress()
	return SourceProgress{Read: p.Read, Total: p.Total}
}

func newFileSource(env Env, o FileSourceOptions) (tracecast.Source, error) {
	speed, err := file.ParseSpeed(o.Speed)
	if err != nil {
		return nil, err
	}
	fo := file.Options{
		Path:         o.Path,
		Speed:        speed,
		MaxLineBytes: o.MaxLineBytes,
		BatchLines:   o.BatchLines,
		StrictEOL:    o.StrictEOL,
		Logger:       env.Logger,
	}
	if speed != file.SpeedMax {
		if env.Parser == nil || env.Parser.NewTimeOf == nil {
			return nil, fmt.Errorf("speed %s needs a parser that reads timestamps (none configured)", speed)
		}
		fo.TimeOf = env.Parser.NewTimeOf()
		switch {
		case env.Parser.TimeScale > 0: // the parser knows its unit (paje: seconds, detected)
			fo.TimeScale = env.Parser.TimeScale
		case o.TimeUnit != "":
			fo.TimeScale, _ = tracecast.UnitsPerSecond(o.TimeUnit)
		default:
			fo.TimeScale = 1
			env.Logger.Warn().Msg("pacing a replay without a known time unit: assuming seconds (set time_unit: ms for StarPU traces)")
		}
	}
	src, err := file.New(fo)
	if err != nil {
		return nil, err
	}
	return fileSource{src}, nil
}

// PajeOptions are the options of a "paje" parser; see paje.Options.
type PajeOptions struct {
	Lenient               bool     `yaml:"lenient"`
	NoStrict              bool     `yaml:"no_strict"`
	UserDefined           bool     `yaml:"user_defined"`
	IgnoreIncompleteLinks bool     `yaml:"ignore_incomplete_links"`
	ReorderHorizon        *float64 `yaml:"reorder_horizon"`
	MaxBuffered           int      `yaml:"max_buffered"`
	MaxLineBytes          int      `yaml:"max_line_bytes"`
	MaxContainers         int      `yaml:"max_containers"`
	MaxOpenStates         int      `yaml:"max_open_states"`
	TimeUnit              string   `yaml:"time_unit"`
	// MaxStreams bounds the traces parsed at once (a Kafka source).
	MaxStreams int `yaml:"max_streams"`
	// StreamErrors: fail (default) stops the pipeline on a bad line; drop
	// ends that trace only, logged, and goes on with the others (a topic
	// of many runs).
	StreamErrors string `yaml:"stream_errors"`
}

// DefaultPajeOptions mirrors paje.DefaultOptions.
func DefaultPajeOptions() PajeOptions {
	d := paje.DefaultOptions()
	return PajeOptions{
		Lenient:               d.Lenient,
		NoStrict:              d.NoStrict,
		UserDefined:           d.UserDefined,
		IgnoreIncompleteLinks: d.IgnoreIncompleteLinks,
		MaxBuffered:           d.MaxBuffered,
		MaxLineBytes:          d.MaxLineBytes,
		MaxContainers:         d.MaxContainers,
		MaxOpenStates:         d.MaxOpenStates,
		TimeUnit:              d.TimeUnit,
		MaxStreams:            DefaultMaxStreams,
	}
}

// Validate checks the options.
func (o *PajeOptions) Validate() error {
	if o.StreamErrors != "" && o.StreamErrors != "fail" && o.StreamErrors != "drop" {
		return fmt.Errorf("stream_errors: %q is not fail or drop", o.StreamErrors)
	}
	if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); o.TimeUnit != "" && o.TimeUnit != "auto" && !ok {
		return fmt.Errorf("time_unit: %q is not one of auto, s, ms, us, ns", o.TimeUnit)
	}
	return nil
}

func newPajeParser(env Env, o PajeOptions) (*Parser, error) {
	po := paje.DefaultOptions()
	po.Name = env.Stream
	po.Lenient = o.Lenient
	po.NoStrict = o.NoStrict
	po.UserDefined = o.UserDefined
	po.IgnoreIncompleteLinks = o.IgnoreIncompleteLinks
	if o.ReorderHorizon != nil {
		po.ReorderHorizon = *o.ReorderHorizon
	}
	po.MaxBuffered = o.MaxBuffered
	po.MaxLineBytes = o.MaxLineBytes
	po.MaxContainers = o.MaxContainers
	po.MaxOpenStates = o.MaxOpenStates
	po.TimeUnit = o.TimeUnit
	// One parser per stream: a Kafka source interleaves traces.
	ps := newPerStream(o.MaxStreams, func(stream string) (tracecast.Processor, error) {
		one := po
		if stream != "" {
			one.Name = stream
		}
		return paje.NewProcessor(one), nil
	})
	if o.StreamErrors == "drop" {
		ps.dropFailedStreams(env.Logger)
	}
	return &Parser{
		Processor: ps,
		// Pacing reads times in seconds: the unit is given, or detected
		// from the header like the parser does (ms for StarPU).
		NewTimeOf: func() func([]byte) (float64, bool) {
			lt := &paje.LineTimer{}
			if timeScale(o.TimeUnit) > 0 {
				lt.SetUnit(o.TimeUnit)
			}
			return lt.Seconds
		},
		TimeScale: 1,
		Stateful:  true,
	}, nil
}

// JSONLSinkOptions are the options of a "jsonl" sink.
type JSONLSinkOptions struct {
	// Path is the output file, or "-" for standard output.
	Path string `yaml:"path"`
	// Records keeps only one record type (entities, samples, windows,
	// predictions, verdicts, alerts); default: everything.
	Records string `yaml:"records"`
}

// Validate checks the options.
func (o *JSONLSinkOptions) Validate() error {
	if o.Path == "" {
		return errors.New("path: required (a file, or - for standard output)")
	}
	return checkRecords(o.Records)
}

func newJSONLSink(env Env, o JSONLSinkOptions) (tracecast.Sink, error) {
	s, err := jsonl.New(jsonl.Options{Path: o.Path})
	if err != nil {
		return nil, err
	}
	return filtered(s, o.Records), nil
}

// ArrowSinkOptions are the options of an "arrow" sink.
type ArrowSinkOptions struct {
	// Path is the output file ("-" is standard output, stream format only).
	Path string `yaml:"path"`
	// Format is file (default: footer on close, PATH.tmp renamed) or stream
	// (each batch flushed; readable while written).
	Format string `yaml:"format"`
	// TimeUnit is recorded as the "time_unit" schema metadata of entity
	// outputs (default "trace": the trace's own unit).
	TimeUnit string `yaml:"time_unit"`
	// Records keeps only one record type (entities, samples, windows,
	// predictions, verdicts, alerts); default: the type of the first batch
	// (then another type is an error).
	Records string `yaml:"records"`
}

// Validate checks the options.
func (o *ArrowSinkOptions) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("path: required"))
	}
	f, err := arrow.ParseFormat(o.Format)
	if err != nil {
		errs = append(errs, fmt.Errorf("format: %w", err))
	} else if f == arrow.FormatFile && o.Path == "-" {
		errs = append(errs, errors.New("path: standard output needs format: stream"))
	}
	errs = append(errs, checkRecords(o.Records))
	return errors.Join(errs...)
}

// arrowTables lists the record types an "arrow" sink can write. Stages that
// emit other records add their arrow.Table here.
func arrowTables(timeUnit string) []arrow.Table {
	meta := map[string]string{"time_unit": timeUnit}
	if timeUnit == "" {
		meta = nil
	}
	return []arrow.Table{
		arrow.EntityTable(timeUnit),
		arrow.SampleTable(meta),
		arrow.StructTable[tracecast.Window]("tracecast.window/1", meta),
		arrow.StructTable[tracecast.Prediction]("tracecast.prediction/1", meta),
		arrow.StructTable[tracecast.Verdict]("tracecast.verdict/1", meta),
		arrow.StructTable[tracecast.Alert]("tracecast.alert/1", meta),
		arrow.StructTable[tracecast.EnergyRow]("tracecast.energy/1", nil),
		arrow.StructTable[tracecast.PowerSample]("tracecast.power/1", nil),
	}
}

func newArrowSink(env Env, o ArrowSinkOptions) (tracecast.Sink, error) {
	tables := arrowTables(o.TimeUnit)
	if o.Records != "" {
		// Put the chosen type first: it is the schema of an empty output.
		want := recordTypes[o.Records]
		for i, t := range tables {
			if t.ItemsType() == want {
				tables[0], tables[i] = tables[i], tables[0]
			}
		}
	}
	s, err := arrow.New(arrow.Options{Path: o.Path, Format: arrow.Format(o.Format), Tables: tables})
	if err != nil {
		return nil, err
	}
	return filtered(s, o.Records), nil
}

// timeScale is the units per second of a parser's time unit, 0 when it is
// detected (auto) or unknown.
func timeScale(unit string) float64 {
	n, ok := tracecast.UnitsPerSecond(unit)
	if !ok {
		return 0
	}
	return n
}

// TailSourceOptions are the options of a "tail" source: a file followed
// while it is written (see package ingest/tail). It never ends by itself: a
// pipeline with a tail source runs until it is stopped.
type TailSourceOptions struct {
	Path         string        `yaml:"path"`
	Start        string        `yaml:"start"`         // beginning | end | saved-or-beginning (default) | saved-or-end
	PositionFile string        `yaml:"position_file"` // where the position is saved; none when empty
	HeaderPrefix string        `yaml:"header_prefix"` // re-read when resuming mid-file (default "%"; "-" disables)
	Poll         time.Duration `yaml:"poll"`
	SyncEvery    time.Duration `yaml:"sync_every"`
	BatchLines   int           `yaml:"batch_lines"`
	MaxLineBytes int           `yaml:"max_line_bytes"`
	// EndAfter ends the input when the file has not grown for that long
	// (the run is over: the last windows are flushed); 0 follows forever.
	EndAfter time.Duration `yaml:"end_after"`
}

// Validate checks the options.
func (o *TailSourceOptions) Validate() error {
	_, err := tail.New(o.tail())
	return err
}

// StreamName is the file path, used by the parser in its messages.
func (o *TailSourceOptions) StreamName() string { return o.Path }

func (o *TailSourceOptions) tail() tail.Options {
	return tail.Options{Path: o.Path, Start: tail.Start(o.Start), PositionFile: o.PositionFile, HeaderPrefix: o.HeaderPrefix,
		Poll: o.Poll, SyncEvery: o.SyncEvery, BatchLines: o.BatchLines, MaxLineBytes: o.MaxLineBytes, EndAfter: o.EndAfter}
}

func newTailSource(env Env, o TailSourceOptions) (tracecast.Source, error) {
	to := o.tail()
	to.Logger = env.Logger
	to.Rebuild = env.Parser != nil && env.Parser.Stateful
	return tail.New(to)
}

// KafkaSinkOptions are the options of a "kafka" sink: records published as
// JSON messages keyed by trace id (see package sinks/kafka).
type KafkaSinkOptions struct {
	Brokers      []string      `yaml:"brokers"`
	Topic        string        `yaml:"topic"`
	BatchTimeout time.Duration `yaml:"batch_timeout"`
	// Records keeps only one record type (predictions, verdicts, alerts, ...).
	Records string `yaml:"records"`
	// Format: json (default; a message per record) or arrow (an Arrow IPC
	// stream per batch and trace).
	Format string `yaml:"format"`
}

// DefaultKafkaSinkOptions publish to a local broker.
func DefaultKafkaSinkOptions() KafkaSinkOptions {
	return KafkaSinkOptions{Brokers: []string{"127.0.0.1:9092"}, Topic: "tracecast.predictions", BatchTimeout: time.Millisecond}
}

// Validate checks the options.
func (o *KafkaSinkOptions) Validate() error {
	var errs []error
	if len(o.Brokers) == 0 {
		errs = append(errs, errors.New("brokers: at least one"))
	}
	if o.Topic == "" {
		errs = append(errs, errors.New("topic: required"))
	}
	if o.Format != "" && o.Format != string(kafkasink.FormatJSON) && o.Format != string(kafkasink.FormatArrow) {
		errs = append(errs, fmt.Errorf("format: %q is not json or arrow", o.Format))
	}
	errs = append(errs, checkRecords(o.Records))
	return errors.Join(errs...)
}

func newKafkaSink(env Env, o KafkaSinkOptions) (tracecast.Sink, error) {
	s, err := kafkasink.New(kafkasink.Options{Brokers: o.Brokers, Topic: o.Topic, BatchTimeout: o.BatchTimeout,
		Format: kafkasink.Format(o.Format), Tables: arrowTables("")})
	if err != nil {
		return nil, err
	}
	return filtered(s, o.Records), nil
}

// IOCallOptions are the options of an "iocall" parser: strace logs or the
// I/O-call CSV / JSON-lines schema (docs/io.md) into []tracecast.IOCall.
type IOCallOptions struct {
	Format       string `yaml:"format"` // strace (default), csv, jsonl, auto (from each stream's name and first line)
	Lenient      bool   `yaml:"lenient"`
	MaxLineBytes int    `yaml:"max_line_bytes"`
	All          bool   `yaml:"all"` // keep calls on sockets, pipes and ttys too
}

// Validate checks the options.
func (o *IOCallOptions) Validate() error {
	if _, err := iocall.ParseFormat(o.Format); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	return nil
}

func newIOCallParser(env Env, o IOCallOptions) (*Parser, error) {
	f, err := iocall.ParseFormat(o.Format)
	if err != nil {
		return nil, err
	}
	// One parser per stream: unfinished calls are per process log.
	return &Parser{Processor: newPerStream(0, func(stream string) (tracecast.Processor, error) {
		if stream == "" {
			stream = env.Stream
		}
		return iocall.NewProcessor(f, iocall.Options{File: stream, Lenient: o.Lenient, MaxLineBytes: o.MaxLineBytes, All: o.All, Logger: env.Logger})
	})}, nil
}

// IOTimeOptions are the options of an "iotime" stage: I/O calls in, "in
// I/O" state records out (container "pid N", type "IO State").
type IOTimeOptions struct {
	Buckets string `yaml:"buckets"` // size buckets, e.g. "4K,64K,1M" (the default)
	// Summary emits, at the end, the breakdown by category as one
	// []iotime.Summary batch (see iotime.Processor.EmitSummary).
	Summary bool `yaml:"summary"`
}

// Validate checks the options.
func (o *IOTimeOptions) Validate() error {
	if o.Buckets == "" {
		return nil
	}
	_, err := iotime.ParseBuckets(o.Buckets)
	return err
}

func newIOTimeStage(env Env, o IOTimeOptions) (tracecast.Processor, error) {
	b := iotime.DefaultBuckets
	if o.Buckets != "" {
		var err error
		if b, err = iotime.ParseBuckets(o.Buckets); err != nil {
			return nil, err
		}
	}
	p := iotime.NewProcessor(b)
	p.EmitSummary = o.Summary
	return p, nil
}

// KafkaSourceOptions are the options of a "kafka" source: trace lines from
// a topic, read with a consumer group and committed at least once (see
// package ingest/kafka for the message format and the commit rule).
type KafkaSourceOptions struct {
	Brokers []string `yaml:"brokers"`
	Topic   string   `yaml:"topic"`
	Group   string   `yaml:"group"`
	// Start: earliest (default) or latest, for partitions the group never
	// committed.
	Start          string        `yaml:"start"`
	CommitInterval time.Duration `yaml:"commit_interval"`
	MaxWait        time.Duration `yaml:"max_wait"`
	SessionTimeout time.Duration `yaml:"session_timeout"`
	BatchLines     int           `yaml:"batch_lines"`
	// TraceTimeout ends a trace silent that long (0: never); see
	// ingest/kafka.Options.
	TraceTimeout time.Duration `yaml:"trace_timeout"`
}

// DefaultKafkaSourceOptions read from a local broker.
func DefaultKafkaSourceOptions() KafkaSourceOptions {
	return KafkaSourceOptions{Brokers: []string{"127.0.0.1:9092"}, Topic: "tracecast.traces", Group: "tracecast",
		Start: "earliest", CommitInterval: time.Second, MaxWait: 250 * time.Millisecond, SessionTimeout: 6 * time.Second, BatchLines: 4096}
}

func (o *KafkaSourceOptions) ingest() kafkaingest.Options {
	return kafkaingest.Options{Brokers: o.Brokers, Topic: o.Topic, Group: o.Group, Start: o.Start, CommitInterval: o.CommitInterval,
		MaxWait: o.MaxWait, SessionTimeout: o.SessionTimeout, BatchLines: o.BatchLines, TraceTimeout: o.TraceTimeout}
}

// Validate checks the options.
func (o *KafkaSourceOptions) Validate() error {
	_, err := kafkaingest.New(o.ingest())
	return err
}

// kafkaSource adapts the source's counts to ProgressReporter.
type kafkaSource struct{ *kafkaingest.Source }

func (s kafkaSource) SourceProgress() SourceProgress {
	return SourceProgress{Read: s.Stats().Bytes, Total: -1}
}

func newKafkaSource(env Env, o KafkaSourceOptions) (tracecast.Source, error) {
	io := o.ingest()
	io.Logger = env.Logger
	s, err := kafkaingest.New(io)
	if err != nil {
		return nil, err
	}
	return kafkaSource{s}, nil
}
