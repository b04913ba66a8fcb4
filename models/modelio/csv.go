package modelio

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/models"
)

// WritePoints writes points as CSV with the header config,time,power —
// what ReadPoints reads — numbers in their shortest exact form.
func WritePoints(w io.Writer, pts []models.Point) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"config", "time", "power"})
	for _, p := range pts {
		cw.Write([]string{p.Config, strconv.FormatFloat(p.Time, 'g', -1, 64), strconv.FormatFloat(p.Power, 'g', -1, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// readTable reads a CSV file whose first row names the columns and returns
// the column index of each lower-cased, trimmed name, and the other rows.
// It fails when a column of want is missing. '#' lines are comments and
// rows may have any number of fields: a short row fails only when a wanted
// field is read from it (see numField).
func readTable(path string, want ...string) (header map[string]int, rows [][]string, err error) {
	f, _, closeIn, err := input.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer closeIn()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%s: empty file (want a header row: %s)", path, strings.Join(want, ","))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	header = map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, dup := header[h]; dup {
			// which of the two is meant cannot be told
			return nil, nil, fmt.Errorf("%s:1: two %q columns", path, h)
		}
		header[h] = i
	}
	for _, w := range want {
		if _, ok := header[w]; !ok {
			return nil, nil, fmt.Errorf("%s:1: no %q column (header: %s)", path, w, strings.Join(head, ","))
		}
	}
	rows, err = r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return header, rows, nil
}

// numField reads field col of rec, line line of path, as a finite number;
// name is the column's, for the error.
func numField(path string, line int, rec []string, col int, name string) (float64, error) {
	if col >= len(rec) {
		return 0, fmt.Errorf("%s:%d: missing %s", path, line, name)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[col]), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s:%d: bad %s %q", path, line, name, rec[col])
	}
	return v, nil
}

// ReadPowerSamples reads the measurements the power model is fitted to: a
// CSV with the columns cpu, f and watts. A cpu above 1 is a percentage.
func ReadPowerSamples(path string) ([]models.PowerSample, error) {
	h, rows, err := readTable(path, "cpu", "f", "watts")
	if err != nil {
		return nil, err
	}
	out := make([]models.PowerSample, 0, len(rows))
	for i, rec := range rows {
		line := i + 2 // 1-based, after the header
		var s models.PowerSample
		var err error
		if s.CPU, err = numField(path, line, rec, h["cpu"], "cpu"); err != nil {
			return nil, err
		}
		if s.F, err = numField(path, line, rec, h["f"], "f"); err != nil {
			return nil, err
		}
		if s.Watts, err = numField(path, line, rec, h["watts"], "watts"); err != nil {
			return nil, err
		}
		if s.CPU > 1 {
			s.CPU /= 100
		}
		// what the predict command refuses as flags is refused here too:
		// a fit through them would be a fit of nonsense
		switch {
		case s.CPU < 0 || s.CPU > 1:
			return nil, fmt.Errorf("%s:%d: cpu %q is not a utilisation (0 to 1, or a percentage up to 100)", path, line, rec[h["cpu"]])
		case s.F <= 0:
			return nil, fmt.Errorf("%s:%d: frequency %q is not positive", path, line, rec[h["f"]])
		case s.Watts <= 0:
			return nil, fmt.Errorf("%s:%d: power %q is not positive", path, line, rec[h["watts"]])
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadPoints reads (configuration, time, power) points for the Pareto
// frontier: a CSV with the columns config, time and power (others are
// ignored). A row too short for its config has an empty one.
func ReadPoints(path string) ([]models.Point, error) {
	h, rows, err := readTable(path, "config", "time", "power")
	if err != nil {
		return nil, err
	}
	pts := make([]models.Point, 0, len(rows))
	for i, rec := range rows {
		line := i + 2
		p := models.Point{}
		if h["config"] < len(rec) {
			p.Config = rec[h["config"]]
		}
		if p.Time, err = numField(path, line, rec, h["time"], "time"); err != nil {
			return nil, err
		}
		if p.Power, err = numField(path, line, rec, h["power"], "power"); err != nil {
			return nil, err
		}
		if p.Time <= 0 || p.Power <= 0 {
			// a point at no time or no power would dominate the others
			return nil, fmt.Errorf("%s:%d: time and power must be positive (got %g and %g)", path, line, p.Time, p.Power)
		}
		pts = append(pts, p)
	}
	return pts, nil
}
