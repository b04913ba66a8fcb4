package modelio

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/starpudir"
)

// taskColumns are a task table's columns that are not parameters
// (tracecast.task/1 without params).
var taskColumns = []string{"id", "run", "codelet", "worker", "worker_kind", "job_id", "footprint", "start_s", "duration_s",
	"energy_j", "predicted_duration_s", "predicted_energy_j"}

// tableBuilder gathers cells into columns; rows may name different columns.
type tableBuilder struct {
	t      *eiger.Table
	kind   map[string]int // 1 numeric seen, 2 text seen, 3 both
	params map[string]bool
	bad    map[string]string
}

func newTableBuilder(source string) *tableBuilder {
	return &tableBuilder{t: &eiger.Table{Source: source, Num: map[string][]float64{}, Text: map[string][]string{}},
		kind: map[string]int{}, params: map[string]bool{}, bad: map[string]string{}}
}

func (b *tableBuilder) row(line int64) { b.t.Lines = append(b.t.Lines, line) }

// cell sets column col of the current row: text, and num when isNum.
func (b *tableBuilder) cell(col, text string, num float64, isNum bool, where string) {
	n := len(b.t.Lines)
	if _, ok := b.t.Text[col]; !ok {
		b.t.Columns = append(b.t.Columns, col)
		b.t.Text[col] = nil
	}
	for len(b.t.Text[col]) < n-1 {
		b.t.Text[col] = append(b.t.Text[col], "")
	}
	b.t.Text[col] = append(b.t.Text[col], text)
	nums := b.t.Num[col]
	for len(nums) < n-1 {
		nums = append(nums, math.NaN())
	}
	switch {
	case isNum:
		b.kind[col] |= 1
		nums = append(nums, num)
	default:
		if text != "" {
			b.kind[col] |= 2
			if _, ok := b.bad[col]; !ok {
				b.bad[col] = fmt.Sprintf("%s: column %s: %q is not a number", where, col, quote(text))
			}
		}
		nums = append(nums, math.NaN())
	}
	b.t.Num[col] = nums
}

func quote(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func (b *tableBuilder) finish() (*eiger.Table, map[string]string) {
	n := len(b.t.Lines)
	for _, col := range b.t.Columns {
		for len(b.t.Text[col]) < n {
			b.t.Text[col] = append(b.t.Text[col], "")
		}
		// Numbers, or nothing at all (energy_j without power): numeric.
		if b.kind[col] > 1 {
			delete(b.t.Num, col)
			if b.kind[col] != 3 {
				delete(b.bad, col)
			}
			continue
		}
		delete(b.bad, col)
		for len(b.t.Num[col]) < n {
			b.t.Num[col] = append(b.t.Num[col], math.NaN())
		}
	}
	isTasks := true
	for _, c := range []string{"codelet", "duration_s", "job_id"} {
		if _, ok := b.t.Text[c]; !ok {
			isTasks = false
		}
	}
	if isTasks {
		b.t.NonInputs = taskColumns
		for _, col := range b.t.Columns {
			if _, ok := b.t.Num[col]; ok && (b.params[col] || indexOf(taskColumns, col) < 0) {
				b.t.Params = append(b.t.Params, col)
			}
		}
		// Size first, then the data handles (h0_..., in name order), then
		// the other fields: the zero-variance elimination keeps the first
		// of inputs that move together (Size rather than GFlop).
		rank := func(c string) int {
			switch {
			case c == "Size":
				return 0
			case strings.HasPrefix(c, "h") && len(c) > 1 && c[1] >= '0' && c[1] <= '9':
				return 1
			}
			return 2
		}
		sort.SliceStable(b.t.Params, func(i, j int) bool {
			ri, rj := rank(b.t.Params[i]), rank(b.t.Params[j])
			if ri != rj {
				return ri < rj
			}
			return b.t.Params[i] < b.t.Params[j]
		})
	}
	return b.t, b.bad
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// parseNum reads a finite number.
func parseNum(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// TaskTable is a measurement table read from a file, with, for the
// columns that hold text where numbers were expected, the first such
// cell as "FILE:LINE: column C: "x" is not a number".
type TaskTable struct {
	*eiger.Table
	NotNumeric map[string]string
	// StarPURaw is true for a StarPU raw measurement file (NAME.out).
	StarPURaw bool
}

// ReadTaskTable reads measurements: a tracecast tasks file (JSON lines,
// Arrow IPC file, or CSV) or any CSV with a header row (lwperf style: one
// row per measurement). The format is the extension's (.csv, .arrow,
// .jsonl or .json; .gz for a gzip-compressed one). Numbers are columns of
// numbers (an empty cell or null is missing); other columns are text, for
// grouping. In a task table, the params object's members are columns, and
// the inputs by default. A StarPU raw measurement file (.out: Duration, M,
// N, ...) is read by starpudir.ReadRaw.
func ReadTaskTable(path string) (*TaskTable, error) {
	if IsStarPURaw(path) {
		r, err := starpudir.ReadRaw(path)
		if err != nil {
			return nil, err
		}
		return &TaskTable{Table: rawTable(r), NotNumeric: map[string]string{}, StarPURaw: true}, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(path), ".gz")))
	var b *tableBuilder
	switch ext {
	case ".csv":
		r, err := input.Decompress(fh)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b, err = readCSVTable(path, r)
		if err != nil {
			return nil, err
		}
	case ".jsonl", ".json", ".ndjson":
		r, err := input.Decompress(fh)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b, err = readJSONLTable(path, r)
		if err != nil {
			return nil, err
		}
	case ".arrow":
		b, err = readArrowTable(path, fh)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: unknown table format %q (.csv, .jsonl, .arrow, StarPU's .out)", path, ext)
	}
	t, bad := b.finish()
	if t.Rows() == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return &TaskTable{Table: t, NotNumeric: bad}, nil
}

func readCSVTable(path string, r io.Reader) (*tableBuilder, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	seen := map[string]bool{}
	for i, h := range head {
		head[i] = strings.TrimSpace(h)
		if head[i] == "" || seen[head[i]] {
			return nil, fmt.Errorf("%s:1: column %d: empty or repeated name %q", path, i+1, head[i])
		}
		seen[head[i]] = true
	}
	b := newTableBuilder(path)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		b.row(int64(line))
		where := fmt.Sprintf("%s:%d", path, line)
		for i, v := range rec {
			v = strings.TrimSpace(v)
			num, ok := parseNum(v)
			b.cell(head[i], v, num, ok && v != "", where)
		}
	}
	return b, nil
}

func readJSONLTable(path string, r io.Reader) (*tableBuilder, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	b := newTableBuilder(path)
	var line int64
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object: %v", path, line, err)
		}
		b.row(line)
		where := fmt.Sprintf("%s:%d", path, line)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := jsonCell(b, k, obj[k], where, true); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return b, nil
}

// jsonCell sets a column from a JSON value: numbers, strings, booleans,
// null; the object "params" (top level only) is flattened into parameter
// columns.
func jsonCell(b *tableBuilder, k string, raw json.RawMessage, where string, top bool) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: %s: %v", where, k, err)
	}
	switch x := v.(type) {
	case nil:
		b.cell(k, "", math.NaN(), false, where)
	case float64:
		b.cell(k, strconv.FormatFloat(x, 'f', -1, 64), x, true, where)
	case string:
		b.cell(k, x, 0, false, where)
	case bool:
		b.cell(k, strconv.FormatBool(x), 0, false, where)
	case map[string]any:
		if !top || k != "params" {
			return fmt.Errorf("%s: %s: nested objects are not columns (only a task's params)", where, k)
		}
		var obj map[string]json.RawMessage
		json.Unmarshal(raw, &obj)
		for _, pk := range slices.Sorted(maps.Keys(obj)) {
			if _, isNum := x[pk].(float64); !isNum {
				return fmt.Errorf("%s: params.%s: not a number", where, pk)
			}
			b.params[pk] = true
			if err := jsonCell(b, pk, obj[pk], where, false); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: %s: arrays are not columns", where, k)
	}
	return nil
}

func readArrowTable(path string, fh *os.File) (*tableBuilder, error) {
	r, err := ipc.NewFileReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: not an Arrow IPC file: %w", path, err)
	}
	defer r.Close()
	b := newTableBuilder(path)
	schema := r.Schema()
	var row int64
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			return nil, fmt.Errorf("%s: record batch %d: %w", path, i, err)
		}
		for k := 0; k < int(rec.NumRows()); k++ {
			row++
			b.row(row)
			where := fmt.Sprintf("%s: row %d", path, row)
			for c, f := range schema.Fields() {
				col := rec.Column(c)
				if col.IsNull(k) {
					b.cell(f.Name, "", math.NaN(), false, where)
					continue
				}
				switch a := col.(type) {
				case *array.Float64:
					v := a.Value(k)
					b.cell(f.Name, strconv.FormatFloat(v, 'f', -1, 64), v, !math.IsNaN(v) && !math.IsInf(v, 0), where)
				case *array.Int64:
					v := float64(a.Value(k))
					b.cell(f.Name, strconv.FormatInt(a.Value(k), 10), v, true, where)
				case *array.Int32:
					v := float64(a.Value(k))
					b.cell(f.Name, strconv.FormatInt(int64(a.Value(k)), 10), v, true, where)
				case *array.Boolean:
					b.cell(f.Name, strconv.FormatBool(a.Value(k)), 0, false, where)
				case *array.String:
					if f.Name == "params" {
						if err := jsonCell(b, "params", json.RawMessage(a.Value(k)), where, true); err != nil {
							return nil, err
						}
						continue
					}
					b.cell(f.Name, a.Value(k), 0, false, where)
				default:
					if f.Type.ID() == arrow.TIMESTAMP {
						continue
					}
					return nil, fmt.Errorf("%s: column %s: type %s is not read", path, f.Name, f.Type)
				}
			}
		}
	}
	return b, nil
}

// WriteTaskModel writes a fit-model file (indented JSON).
func WriteTaskModel(path string, f *eiger.File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadTaskModel reads a fit-model file and readies its models.
func ReadTaskModel(path string) (*eiger.File, error) {
	var f eiger.File
	if err := readJSON(path, &f); err != nil {
		return nil, err
	}
	if f.Model != eiger.ModelName || f.Target == "" {
		return nil, fmt.Errorf("%s: not a task model file (model %q, want %q)", path, f.Model, eiger.ModelName)
	}
	for i := range f.Groups {
		g := &f.Groups[i]
		if g.Model == nil {
			continue
		}
		if err := g.Model.Restore(); err != nil {
			return nil, fmt.Errorf("%s: group %s: %w", path, g.Name, err)
		}
	}
	return &f, nil
}
