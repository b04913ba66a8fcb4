// Package starpudir reads and writes StarPU's sampling directory: the
// measurements StarPU takes of its codelets, as StarPU 1.3 and 1.4 write
// them (performance model format version 45) under
// $STARPU_HOME/.starpu/sampling/codelets/:
//
//   - tmp/SYMBOL.out, a multiple-regression codelet's raw measurements
//     (STARPU_CALIBRATE=1 appends them): a header "Duration, M, N, K" (the
//     codelet's parameters_names, P0, P1, ... when it has none), then one
//     row per task, the duration in µs and the parameters, comma-separated,
//     rows written "\n%f, %f, ..." so that the file has no final newline
//     (StarPU's multiple_regression.c). ReadRaw reads one.
//   - 45/SYMBOL.HOST, a codelet's performance model on host HOST: per
//     combination of devices and per implementation, the linear and
//     non-linear regressions, the multiple-regression coefficients (the
//     line "NCOEFF C0 C1 ...", after the comment "# n intercept M^2*N
//     N^3*K" that names the declared monomials), and the history (per
//     footprint: size, flops, mean and deviation in µs, sum, sum of
//     squares, count). ReadModel reads one as StarPU's
//     src/core/perfmodel/perfmodel_history.c does (parse_model_file),
//     keeping the file's lines so that SetCoefficients and WriteModel
//     change the coefficient lines and nothing else.
//
// Open reads a whole directory: a file that is not what StarPU writes
// (damaged, truncated, another version, another program's) is reported in
// Dir.Skipped with its path and the reason, and the others are read.
// Errors name the file, the line and the reason ("FILE:LINE: reason").
package starpudir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/internal/output"
)

// Version is the performance model format version read and written (the
// directory 45/ of StarPU 1.3 and 1.4).
const Version = 45

// DurationColumn is the first column of a raw file: the task's duration,
// in µs.
const DurationColumn = "Duration"

// maxFileBytes bounds what is read of one file (a model file of a codelet
// with many footprints is some MB; a raw file grows with each calibrated
// run).
const maxFileBytes = 1 << 30

// Raw is a multiple-regression codelet's raw measurements (tmp/SYMBOL.out).
type Raw struct {
	Path string
	// Symbol is the codelet's model symbol: the file name without .out.
	Symbol string
	// Params are the parameters' names, after Duration.
	Params []string
	// Duration (µs) and the parameters of each task, and the line each
	// was read from.
	Duration []float64
	X        [][]float64
	Lines    []int
}

// ReadRaw reads a raw file (gzip-compressed too).
func ReadRaw(path string) (*Raw, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRaw(path, data)
}

func readFile(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes: larger than the %d read", path, st.Size(), maxFileBytes)
	}
	return input.ReadFile(path)
}

// ParseRaw reads a raw file's content; path names it in errors and gives
// the symbol.
func ParseRaw(path string, data []byte) (*Raw, error) {
	r := &Raw{Path: path, Symbol: strings.TrimSuffix(filepath.Base(path), ".out")}
	if err := checkText(path, data); err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	head := strings.TrimSuffix(lines[0], "\r")
	fields := splitComma(head)
	if len(fields) < 2 || fields[0] != DurationColumn {
		return nil, fmt.Errorf("%s:1: not a StarPU raw measurement file: the header is %q, want %q followed by the parameters' names", path, quote(head), DurationColumn+", M, N, ...")
	}
	seen := map[string]bool{}
	for i, f := range fields[1:] {
		if !validName(f) || seen[f] || f == DurationColumn {
			return nil, fmt.Errorf("%s:1: parameter %d: name %q is empty, repeated or not a name (letters, digits, _)", path, i+1, quote(f))
		}
		seen[f] = true
	}
	r.Params = fields[1:]
	for k, line := range lines[1:] {
		ln := k + 2
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fs := splitComma(line)
		if len(fs) != len(fields) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d (%s)", path, ln, len(fs), len(fields), strings.Join(fields, ", "))
		}
		vals := make([]float64, len(fs))
		for j, f := range fs {
			v, err := parseNumber(f)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %v", path, ln, fields[j], err)
			}
			vals[j] = v
		}
		if vals[0] < 0 {
			return nil, fmt.Errorf("%s:%d: %s %g is negative", path, ln, DurationColumn, vals[0])
		}
		r.Duration = append(r.Duration, vals[0])
		r.X = append(r.X, vals[1:])
		r.Lines = append(r.Lines, ln)
	}
	if len(r.Duration) == 0 {
		return nil, fmt.Errorf("%s: no measurements (a header only)", path)
	}
	return r, nil
}

// validName is a parameter name StarPU's monomials and tracecast's terms
// can use: letters, digits and _, not starting with a digit.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validName(s string) bool { return nameRE.MatchString(s) }

func splitComma(s string) []string {
	fs := strings.Split(s, ",")
	for i := range fs {
		fs[i] = strings.TrimSpace(fs[i])
	}
	return fs
}

// parseNumber reads a finite decimal number as StarPU's %f writes it.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a finite number", quote(s))
	}
	return v, nil
}

// checkText refuses binary content (a NUL or control byte, invalid UTF-8).
func checkText(path string, data []byte) error {
	line := 1
	for i, c := range data {
		switch {
		case c == '\n':
			line++
		case c < 0x20 && c != '\t' && c != '\r':
			return fmt.Errorf("%s:%d: binary data (byte 0x%02x at offset %d): not a StarPU text file", path, line, c, i)
		}
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%s: not UTF-8 text: not a StarPU text file", path)
	}
	return nil
}

func quote(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Device is one device of a combination: its type (StarPU's
// starpu_worker_archtype: 0 CPU, 1 CUDA, 2 OpenCL, 3 MIC, 5 MPI_MS), id
// and number of cores.
type Device struct {
	Type, ID, NCores int
}

// typeNames are starpu_perfmodel_get_archtype_name's names by type.
var typeNames = map[int]string{0: "cpu", 1: "cuda", 2: "opencl", 3: "mic", 5: "mpi_ms"}

// Linear is the linear regression (alpha·size^beta, on logs) of a model.
type Linear struct {
	SumLnX, SumLnX2, SumLnY, SumLnXLnY, Alpha, Beta float64
	N                                               int
	MinX, MaxX                                      uint64
}

// Entry is one footprint of a history: data size (bytes), flops, mean
// and deviation of the duration (µs), sum and sum of squares, count.
type Entry struct {
	Footprint            uint32
	Size                 uint64
	Flops                float64
	Mean, Dev, Sum, Sum2 float64
	N                    int
	Line                 int
}

// PerArch is the model of one implementation on one combination of
// devices.
type PerArch struct {
	// Arch is StarPU's name of the combination and implementation
	// (starpu_perfmodel_get_arch_name without the combination's number):
	// cpu0_impl0, cuda0_impl1, cpu0_cuda0_impl0.
	Arch    string
	Comb    int
	Impl    int
	Devices []Device
	Linear  Linear
	// A, B, C are the non-linear regression a·size^b + c (NaN: none).
	A, B, C float64
	// Coeff are the multiple-regression coefficients (intercept first;
	// NaN: not computed); none for a model that is not of that type.
	Coeff []float64
	// Monomials are the names of the monomials the coefficients after the
	// intercept multiply, from the comment before them (M^2*N, N^3*K); nil
	// when the comment does not name them as StarPU writes it.
	Monomials []string
	// CoeffLine is the line of the coefficients.
	CoeffLine int
	Entries   []Entry
}

// Model is a performance model file (45/SYMBOL.HOST).
type Model struct {
	Path string
	// Symbol and Host are the file name's parts: SYMBOL.HOST (a symbol
	// holding a dot is the whole name: StarPU adds no host to it).
	Symbol, Host string
	PerArch      []*PerArch
	lines        []string // the file's lines, each with its newline
}

// ReadModel reads a performance model file (gzip-compressed too: a
// compressed file cannot be written back).
func ReadModel(path string) (*Model, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseModel(path, data)
}

// modelParser reads the items of a model file as StarPU's fscanf calls do,
// one per line, skipping comment lines (#) and empty lines where StarPU
// calls _starpu_drop_comments.
type modelParser struct {
	path    string
	lines   []string
	i       int    // next line
	comment string // the last comment line skipped
}

func (p *modelParser) errf(line int, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", p.path, line, fmt.Sprintf(format, a...))
}

// next returns the next line that is not a comment or empty, and its
// number.
func (p *modelParser) next(what string) (string, int, error) {
	for p.i < len(p.lines) {
		l := strings.TrimRight(p.lines[p.i], "\r\n")
		p.i++
		if strings.HasPrefix(l, "#") {
			p.comment = l
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		return l, p.i, nil
	}
	return "", p.i, p.errf(p.i, "end of file: want %s (truncated?)", what)
}

// fields reads the next line as n whitespace-separated fields.
func (p *modelParser) fields(what string, n int) ([]string, int, error) {
	l, ln, err := p.next(what)
	if err != nil {
		return nil, ln, err
	}
	fs := strings.Fields(l)
	if len(fs) != n {
		return nil, ln, p.errf(ln, "%s: %d fields, want %d", what, len(fs), n)
	}
	return fs, ln, nil
}

// integer reads the next line as one integer in [lo, hi].
func (p *modelParser) integer(what string, lo, hi int) (int, int, error) {
	fs, ln, err := p.fields(what, 1)
	if err != nil {
		return 0, ln, err
	}
	v, err := strconv.Atoi(fs[0])
	if err != nil || v < lo || v > hi {
		return 0, ln, p.errf(ln, "%s: %q is not an integer from %d to %d", what, quote(fs[0]), lo, hi)
	}
	return v, ln, nil
}

// float reads a %le field: a number, nan or -nan (glibc's), inf.
func float(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "nan", "-nan", "+nan":
		return math.NaN(), true
	}
	if strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil || errors.Is(err, strconv.ErrRange)
}

// Bounds of what a model file may say (StarPU's own are the machine's;
// these only stop a damaged file from making the reader allocate much).
const (
	maxCombs   = 4096
	maxDevices = 256
	maxImpls   = 64
	maxCoeff   = 4096
	maxEntries = 1 << 24
)

// ParseModel reads a model file's content; path names it in errors and
// gives the symbol and host.
func ParseModel(path string, data []byte) (*Model, error) {
	if err := checkText(path, data); err != nil {
		return nil, err
	}
	m := &Model{Path: path}
	base := filepath.Base(path)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		m.Symbol, m.Host = base[:i], base[i+1:]
	} else {
		m.Symbol = base
	}
	m.lines = strings.SplitAfter(string(data), "\n")
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty file (StarPU ignores it)", path)
	}
	p := &modelParser{path: path, lines: m.lines}
	v, ln, err := p.integer("the performance model version", math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, fmt.Errorf("%w (not a StarPU performance model file?)", err)
	}
	if v != Version {
		return nil, p.errf(ln, "performance model version %d: only version %d (StarPU 1.3, 1.4) is read", v, Version)
	}
	ncombs, _, err := p.integer("the number of combinations", 0, maxCombs)
	if err != nil {
		return nil, err
	}
	for comb := range ncombs {
		ndev, _, err := p.integer("the number of devices", 1, maxDevices)
		if err != nil {
			return nil, err
		}
		devs := make([]Device, ndev)
		var names []string
		for d := range devs {
			t, ln, err := p.integer("a device type", 0, 16)
			if err != nil {
				return nil, err
			}
			name, ok := typeNames[t]
			if !ok {
				return nil, p.errf(ln, "device type %d: not one of StarPU's (0 CPU, 1 CUDA, 2 OpenCL, 3 MIC, 5 MPI_MS)", t)
			}
			id, _, err := p.integer("a device id", 0, math.MaxInt32)
			if err != nil {
				return nil, err
			}
			nc, _, err := p.integer("a number of cores", 0, math.MaxInt32)
			if err != nil {
				return nil, err
			}
			devs[d] = Device{Type: t, ID: id, NCores: nc}
			names = append(names, name+strconv.Itoa(id))
		}
		nimpls, _, err := p.integer("the number of implementations", 0, maxImpls)
		if err != nil {
			return nil, err
		}
		for impl := range nimpls {
			pa := &PerArch{Comb: comb, Impl: impl, Devices: devs,
				Arch: strings.Join(names, "_") + "_impl" + strconv.Itoa(impl)}
			if err := p.perArch(pa); err != nil {
				return nil, err
			}
			m.PerArch = append(m.PerArch, pa)
		}
	}
	// Duplicate names (combinations that differ in cores only) get the
	// combination's number.
	count := map[string]int{}
	for _, pa := range m.PerArch {
		count[pa.Arch]++
	}
	for _, pa := range m.PerArch {
		if count[pa.Arch] > 1 {
			pa.Arch += "_comb" + strconv.Itoa(pa.Comb)
		}
	}
	for p.i < len(p.lines) {
		l := strings.TrimSpace(p.lines[p.i])
		p.i++
		if l != "" && !strings.HasPrefix(l, "#") {
			return nil, p.errf(p.i, "%q after the last model: not what StarPU writes", quote(l))
		}
	}
	return m, nil
}

// perArch reads one implementation's model (parse_per_arch_model_file).
func (p *modelParser) perArch(pa *PerArch) error {
	nentries, _, err := p.integer("the number of history entries", 0, maxEntries)
	if err != nil {
		return err
	}
	fs, ln, err := p.fields("the linear regression (sumlnx sumlnx2 sumlny sumlnxlny alpha beta n minx maxx)", 9)
	if err != nil {
		return err
	}
	var lin [6]float64
	for k := range lin {
		v, ok := float(fs[k])
		if !ok {
			return p.errf(ln, "linear regression: field %d: %q is not a number", k+1, quote(fs[k]))
		}
		lin[k] = v
	}
	pa.Linear = Linear{SumLnX: lin[0], SumLnX2: lin[1], SumLnY: lin[2], SumLnXLnY: lin[3], Alpha: lin[4], Beta: lin[5]}
	n, err1 := strconv.Atoi(fs[6])
	minx, err2 := strconv.ParseUint(fs[7], 10, 64)
	maxx, err3 := strconv.ParseUint(fs[8], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || n < 0 {
		return p.errf(ln, "linear regression: n, minx, maxx %q %q %q are not counts", quote(fs[6]), quote(fs[7]), quote(fs[8]))
	}
	pa.Linear.N, pa.Linear.MinX, pa.Linear.MaxX = n, minx, maxx
	fs, ln, err = p.fields("the non-linear regression (a b c)", 3)
	if err != nil {
		return err
	}
	var abc [3]float64
	for k := range abc {
		v, ok := float(fs[k])
		if !ok {
			return p.errf(ln, "non-linear regression: field %d: %q is not a number", k+1, quote(fs[k]))
		}
		abc[k] = v
	}
	pa.A, pa.B, pa.C = abc[0], abc[1], abc[2]
	p.comment = ""
	l, ln, err := p.next("the multiple regression (ncoeff c0 c1 ...)")
	if err != nil {
		return err
	}
	fs = strings.Fields(l)
	nc, err := strconv.Atoi(fs[0])
	if err != nil || nc < 0 || nc > maxCoeff {
		return p.errf(ln, "multiple regression: the number of coefficients %q is not an integer from 0 to %d", quote(fs[0]), maxCoeff)
	}
	if len(fs) != nc+1 {
		return p.errf(ln, "multiple regression: %d coefficients after the count %d", len(fs)-1, nc)
	}
	pa.CoeffLine = ln
	for _, f := range fs[1:] {
		v, ok := float(f)
		if !ok {
			return p.errf(ln, "multiple regression: coefficient %q is not a number", quote(f))
		}
		pa.Coeff = append(pa.Coeff, v)
	}
	if nc > 1 {
		// "# n\tintercept\tM^2*N\t\tN^3*K\t\t" (dump_reg_model)
		cf := strings.Fields(strings.TrimPrefix(p.comment, "#"))
		if len(cf) == nc+1 && cf[0] == "n" && cf[1] == "intercept" {
			pa.Monomials = cf[2:]
		}
	}
	for range nentries {
		l, ln, err := p.next("a history entry")
		if err != nil {
			return err
		}
		e, err := parseEntry(l)
		if err != nil {
			return p.errf(ln, "history entry: %v", err)
		}
		e.Line = ln
		pa.Entries = append(pa.Entries, e)
	}
	return nil
}

// parseEntry reads "%08x\t%lu\t%le\t%le\t%le\t%le\t%le\t%u" (footprint,
// size, flops, mean, deviation, sum, sum2, n), or the same without flops
// (older files), as scan_history_entry does; negative values are refused
// as StarPU asserts.
func parseEntry(line string) (Entry, error) {
	fs := strings.Fields(line)
	var e Entry
	if len(fs) != 8 && len(fs) != 7 {
		return e, fmt.Errorf("%d fields, want 8 (hash size flops mean dev sum sum2 n)", len(fs))
	}
	fp, err := strconv.ParseUint(fs[0], 16, 32)
	if err != nil {
		return e, fmt.Errorf("footprint %q is not a 32-bit hexadecimal number", quote(fs[0]))
	}
	e.Footprint = uint32(fp)
	if e.Size, err = strconv.ParseUint(fs[1], 10, 64); err != nil {
		return e, fmt.Errorf("size %q is not a count", quote(fs[1]))
	}
	vals := fs[2 : len(fs)-1]
	var v [5]float64
	if len(vals) == 4 { // no flops
		vals = append([]string{"0"}, vals...)
	}
	names := []string{"flops", "mean", "deviation", "sum", "sum2"}
	for k, s := range vals {
		x, ok := float(s)
		if !ok || math.IsInf(x, 0) || x < 0 || math.IsNaN(x) && k != 0 {
			return e, fmt.Errorf("%s %q is not a non-negative number", names[k], quote(s))
		}
		v[k] = x
	}
	e.Flops, e.Mean, e.Dev, e.Sum, e.Sum2 = v[0], v[1], v[2], v[3], v[4]
	n, err := strconv.ParseUint(fs[len(fs)-1], 10, 32)
	if err != nil {
		return e, fmt.Errorf("count %q is not a count", quote(fs[len(fs)-1]))
	}
	e.N = int(n)
	return e, nil
}

// Exponents reads a StarPU monomial name (M^2*N, N^3*K: parameters joined
// by *, each with an optional ^POWER ≥ 1) against the parameters' names:
// the power of each parameter, as the codelet's combinations[i] say it.
func Exponents(monomial string, params []string) ([]int, error) {
	exp := make([]int, len(params))
	for _, part := range strings.Split(monomial, "*") {
		name, pow, hasPow := strings.Cut(part, "^")
		j := slices.Index(params, name)
		if j < 0 {
			return nil, fmt.Errorf("monomial %q: %q is not a parameter (%s)", monomial, name, strings.Join(params, ", "))
		}
		k := 1
		if hasPow {
			var err error
			if k, err = strconv.Atoi(pow); err != nil || k < 1 || k > 64 {
				return nil, fmt.Errorf("monomial %q: power %q is not an integer from 1 to 64", monomial, pow)
			}
		}
		exp[j] += k
	}
	return exp, nil
}

// Monomial is StarPU's name of a monomial (dump_reg_model): the
// parameters with a positive exponent, in order, joined by *, each
// followed by ^E when E > 1; "" when every exponent is 0.
func Monomial(exp []int, params []string) string {
	var parts []string
	for j, e := range exp {
		switch {
		case e == 1:
			parts = append(parts, params[j])
		case e > 1:
			parts = append(parts, params[j]+"^"+strconv.Itoa(e))
		}
	}
	return strings.Join(parts, "*")
}

// SetCoefficients replaces the multiple-regression coefficients of pa (one
// of m's) in the file's lines: the line "NCOEFF C0 C1 ..." is rewritten
// with the same count and the values in full precision ("%.17e", which
// StarPU's %le reads exactly); the rest of the file is unchanged.
func (m *Model) SetCoefficients(pa *PerArch, coeff []float64) error {
	if !slices.Contains(m.PerArch, pa) {
		return errors.New("SetCoefficients: not a model of this file")
	}
	if len(coeff) != len(pa.Coeff) {
		return fmt.Errorf("%s:%d: %s: %d coefficients given, the file has %d", m.Path, pa.CoeffLine, pa.Arch, len(coeff), len(pa.Coeff))
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(coeff)))
	for _, c := range coeff {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("%s: %s: coefficient %g is not finite", m.Path, pa.Arch, c)
		}
		b.WriteString("\t" + strconv.FormatFloat(c, 'e', 16, 64))
	}
	old := m.lines[pa.CoeffLine-1]
	nl := old[len(strings.TrimRight(old, "\r\n")):]
	m.lines[pa.CoeffLine-1] = b.String() + nl
	pa.Coeff = append(pa.Coeff[:0], coeff...)
	return nil
}

// Bytes is the file's content, with the coefficients set.
func (m *Model) Bytes() []byte { return []byte(strings.Join(m.lines, "")) }

// WriteModel replaces m's file with m.Bytes(), keeping the file it
// replaces as PATH.bak (PATH.bak.1, .bak.2, ... when that exists: no
// backup is overwritten). The new content is written as PATH.tmp and
// renamed over the old file (internal/output, as every file tracecast
// writes: a full disk leaves PATH as it was). It returns the backup's
// path. StarPU must not be running on the directory (it rewrites
// model files when it shuts down with STARPU_CALIBRATE set).
func WriteModel(m *Model) (backup string, err error) {
	st, err := os.Stat(m.Path)
	if err != nil {
		return "", err
	}
	old, err := os.ReadFile(m.Path)
	if err != nil {
		return "", err
	}
	if bytes.HasPrefix(old, []byte{0x1f, 0x8b}) {
		return "", fmt.Errorf("%s: gzip-compressed: StarPU reads no compressed model, not written back", m.Path)
	}
	for k := 0; ; k++ {
		backup = m.Path + ".bak"
		if k > 0 {
			backup += "." + strconv.Itoa(k)
		}
		f, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(old)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(backup)
			return "", werr
		}
		break
	}
	return backup, output.WriteFile(m.Path, func(w io.Writer) error {
		_, err := w.Write(m.Bytes())
		return err
	})
}
