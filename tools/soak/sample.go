//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tracecast/tracecast/internal/output"
)

// sample is one row of the soak's CSV: the live service's process and
// pipeline at one instant.
type sample struct {
	at         time.Duration // since the soak's start (after the warm-up)
	rssMiB     float64
	goroutines float64
	fds        float64
	lag        float64 // tracecast_kafka_consumer_lag summed over partitions
	recordsOut float64 // tracecast_records_out_total of the sinks
	runs       int     // runs published (end marker sent)
	complete   int     // runs whose every record is on the topics
	fault      string  // the fault under way, if any
}

// scrape reads the metrics the soak samples from a /metrics page:
// goroutines, the consumer lag summed over partitions (and how many
// partitions report one) and the sinks' records out.
type scrape struct {
	goroutines, lag, recordsOut float64
	lagPartitions               int
}

func scrapeMetrics(ctx context.Context, addr string) (scrape, error) {
	var s scrape
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		switch {
		case name == "go_goroutines":
			s.goroutines = v
		case name == "tracecast_kafka_consumer_lag":
			s.lag += v
			s.lagPartitions++
		case name == "tracecast_records_out_total" && strings.Contains(line, `kind="sink"`):
			s.recordsOut += v
		}
	}
	return s, sc.Err()
}

// procStats reads a process's resident set (MiB) and open descriptors.
func procStats(pid int) (rssMiB, fds float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			rssMiB = kb / 1024
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, 0, err
	}
	return rssMiB, float64(len(ents)), nil
}

// writeCSV writes the samples (PATH.tmp renamed once complete).
func writeCSV(path string, samples []sample) error {
	return output.WriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, "elapsed_s,rss_mib,goroutines,open_fds,consumer_lag,records_out,runs_published,runs_complete,fault")
		for _, s := range samples {
			fmt.Fprintf(bw, "%.1f,%.1f,%.0f,%.0f,%.0f,%.0f,%d,%d,%s\n", s.at.Seconds(), s.rssMiB, s.goroutines, s.fds, s.lag, s.recordsOut,
				s.runs, s.complete, s.fault)
		}
		return bw.Flush()
	})
}

// third is the mean of a quantity over a third of the samples.
type third struct{ first, last float64 }

// thirds compares the mean of v over the samples of the first third of
// the soak with the mean over its last third. The mean, not the peak: a
// fault in the last third (a broker restart's reconnections) lifts one
// sample, a leak lifts them all.
func thirds(samples []sample, d time.Duration, v func(sample) float64) third {
	var t third
	var nf, nl int
	for _, s := range samples {
		switch {
		case s.at <= d/3:
			t.first += v(s)
			nf++
		case s.at > 2*d/3:
			t.last += v(s)
			nl++
		}
	}
	if nf > 0 {
		t.first /= float64(nf)
	}
	if nl > 0 {
		t.last /= float64(nl)
	}
	return t
}

// scrapeOffsets reads tracecast_kafka_consumer_offset per partition.
func scrapeOffsets(ctx context.Context, addr string) (map[int]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[int]int64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tracecast_kafka_consumer_offset{") {
			continue
		}
		i := strings.Index(line, `partition="`)
		if i < 0 {
			continue
		}
		rest := line[i+len(`partition="`):]
		p, err := strconv.Atoi(rest[:strings.IndexByte(rest, '"')])
		if err != nil {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		out[p] = int64(v)
	}
	return out, sc.Err()
}
