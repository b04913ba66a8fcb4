package study

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast/stats/ks"
)

// ParseInts reads a list of positive integers ("8,16,32") or a range
// FROM:TO:STEP ("1000:4000:200"): the study's DAG and cluster sizes.
func ParseInts(s string) ([]int, error) {
	if strings.Contains(s, ":") {
		return ks.ParseWindows(s)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad list %q", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// MaxDegree bounds --degree: a surface of degree d has (d+1)(d+2)/2
// terms and needs points at d DAG sizes; the study's is 4 (MATLAB's poly44).
const MaxDegree = 10

// Parse sets the candidate window sizes (a list or FROM:TO:STEP) and the KS
// p-value method from their flags' text, and checks the other options:
// errors are *UsageError.
func (c *TrainConfig) Parse(windows, method string) error {
	m, err := ks.ParseMethod(method)
	if err != nil {
		return usageErr(err)
	}
	ws, err := ks.ParseWindows(windows)
	if err != nil {
		return usageErr(err)
	}
	if c.MaxSamples <= 0 {
		return usageErr(fmt.Errorf("--max-samples must be positive (got %d)", c.MaxSamples))
	}
	if !(c.Target > 0 && c.Target <= 1) { // NaN too
		return usageErr(fmt.Errorf("--target %g: want (0, 1]", c.Target))
	}
	if c.Degree < 1 || c.Degree > MaxDegree {
		return usageErr(fmt.Errorf("--degree %d: want an integer in [1, %d]", c.Degree, MaxDegree))
	}
	if c.Jobs < 1 {
		return usageErr(fmt.Errorf("--jobs %d: want at least 1", c.Jobs))
	}
	if err := ks.CheckAlpha(c.Alpha); err != nil {
		return usageErr(fmt.Errorf("--alpha %w", err))
	}
	if c.Period.Sign() < 0 {
		return usageErr(fmt.Errorf("--period %s: must be positive (0: per trace)", c.Period))
	}
	if c.MinPeriod.Sign() < 0 {
		return usageErr(fmt.Errorf("--min-period %s: must be 0 or positive", c.MinPeriod))
	}
	c.Method, c.Windows = m, ws
	return nil
}

// ParseSizes sets the DAG and cluster sizes from their flags' text (a
// list or FROM:TO:STEP, kept as written for the report): errors are
// *UsageError.
func (c *ReproduceConfig) ParseSizes(sizes, clusterSizes string) error {
	var err error
	if c.Sizes, err = ParseInts(sizes); err != nil {
		return usageErr(fmt.Errorf("--sizes: %w", err))
	}
	if c.ClusterSizes, err = ParseInts(clusterSizes); err != nil {
		return usageErr(fmt.Errorf("--cluster-sizes: %w", err))
	}
	c.SizesSpec, c.ClusterSizesSpec = sizes, clusterSizes
	return nil
}

// TrainFrom trains on the traces of metaDir's metadata files and of paths
// (see Inputs) into dir; no trace at all is a *UsageError.
func TrainFrom(metaDir string, paths []string, dir string, c *TrainConfig) ([]*Analysis, error) {
	ins, err := Inputs(metaDir, paths)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, usageErr(fmt.Errorf("no trace: give --meta-dir DIR, metadata files or traces"))
	}
	as, _, err := Train(ins, dir, c)
	return as, err
}
