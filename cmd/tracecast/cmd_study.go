package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/study"
)

// studyCommands are seed 004's benchmarking-phase commands: the workload
// synthesizer, the surface builder/analyzer and the reduced reproduction.
// Their logic is the package study; here are their flags and terminal output.
func studyCommands() []*cobra.Command {
	return []*cobra.Command{newSynthCmd(), newTrainCmd(), newReproduceCmd()}
}

// studyErr gives the study's errors in its options the usage exit code.
func studyErr(err error) error {
	if ue := (*study.UsageError)(nil); errors.As(err, &ue) {
		return usageErr(err)
	}
	return err
}

// studyInts reads a list of positive integers or FROM:TO:STEP (--sizes,
// --cluster-sizes).
func studyInts(s string) ([]int, error) {
	if strings.Contains(s, ":") {
		return parseWindows(s)
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
