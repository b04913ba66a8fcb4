//go:build linux

package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/live"
)

// config is what a soak runs and for how long.
type config struct {
	binary string // the tracecast binary
	dir    string // work directory: logs, traces, the broker's data
	out    string // where soak.csv, soak.svg and summary.txt go
	// duration is the soak's length after the warm-up; interval the
	// sampling period.
	duration, interval time.Duration
	// faultEvery: a fault starts every faultEvery (broker restart and
	// full disk in turn), each lasting faultLength.
	faultEvery, faultLength time.Duration
	streams                 int           // publishers running at once
	gap                     time.Duration // pause between a stream's runs
	speed                   string        // publish --speed
	// realTrace is a real StarPU trace among the short synthetic runs,
	// one run in realEvery.
	realTrace string
	realEvery int
	// diskBytes is the broker's tmpfs's size when not full.
	diskBytes int64
	log       zerolog.Logger
}

// defaults fills what the flags left out, from the duration: a sample
// every 10 s (at least 10 samples per third), a fault every 3 minutes (at
// least three), 10 s long (at most a twelfth of the soak).
func (c *config) defaults() {
	if c.interval <= 0 {
		c.interval = min(10*time.Second, c.duration/30)
	}
	if c.faultEvery <= 0 {
		c.faultEvery = min(3*time.Minute, c.duration/4)
	}
	if c.faultLength <= 0 {
		c.faultLength = min(10*time.Second, c.duration/12)
	}
	if c.streams <= 0 {
		c.streams = 4
	}
	if c.speed == "" {
		c.speed = "realtime"
	}
	if c.realEvery <= 0 {
		c.realEvery = 10
	}
	if c.diskBytes <= 0 {
		c.diskBytes = 8 << 30
	}
}

// faultResult is what happened around one fault.
type faultResult struct {
	what       string
	start, end time.Duration // since the soak's start
	// caughtUp is how long after the fault's end the service had read
	// every message on the input topic (-1: not within a minute).
	caughtUp time.Duration
	// unready: /readyz answered 503 during the fault.
	unready bool
}

// result is a soak's measurements and verdicts.
type result struct {
	cfg      config
	samples  []sample
	faults   []faultResult
	tally    tally
	rss      third
	gor      third
	fds      third
	criteria []criterion
	warmup   time.Duration
	diskNote string
}

type criterion struct {
	what   string
	ok     bool
	detail string
}

func (r *result) passed() bool {
	for _, c := range r.criteria {
		if !c.ok {
			return false
		}
	}
	return len(r.criteria) > 0
}

// soak is a running soak: its processes and what it measures.
type soak struct {
	cfg      config
	addr     string // the broker
	metrics  string // the pipeline's metrics address
	dataDir  string
	disk     *disk
	broker   *exec.Cmd
	pipeline *exec.Cmd
	// pipelineDone is closed when the service exited; died says it
	// exited before the soak stopped it.
	pipelineDone chan struct{}
	stopping     atomic.Bool
	died         atomic.Value // string
	bases        []*base
	check        *checker
	published    atomic.Int64
	fault        atomic.Value // string: the fault under way
	start        time.Time
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// run runs a soak and returns its result; an error is a soak that could
// not run (not one that failed its criteria).
func run(ctx context.Context, cfg config) (*result, error) {
	cfg.defaults()
	s := &soak{cfg: cfg, check: newChecker()}
	s.fault.Store("")
	var err error
	if s.addr, err = freeAddr(); err != nil {
		return nil, err
	}
	if s.metrics, err = freeAddr(); err != nil {
		return nil, err
	}
	for _, d := range []string{cfg.dir, cfg.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	res := &result{cfg: cfg}
	if err := s.makeBases(); err != nil {
		return nil, err
	}
	s.dataDir = filepath.Join(cfg.dir, "broker-data")
	if s.disk, err = mountDisk(s.dataDir, cfg.diskBytes); err != nil {
		// Without a tmpfs of its own the broker's disk cannot be filled
		// without filling the machine's: the full-disk faults become
		// broker restarts, and the summary says so.
		res.diskNote = fmt.Sprintf("no full-disk faults: %v (run as root)", err)
		cfg.log.Warn().Err(err).Msg("the broker's data directory is not a tmpfs of its own: its disk is not filled, broker restarts instead")
		s.disk = nil
	} else {
		defer func() {
			if err := s.disk.unmount(); err != nil {
				cfg.log.Warn().Err(err).Str("dir", s.dataDir).Msg("unmounting the broker's tmpfs")
			}
		}()
	}
	if err := s.startBroker(); err != nil {
		return nil, err
	}
	defer s.stopBroker()
	if err := s.startPipeline(); err != nil {
		return nil, err
	}
	defer s.stopPipeline()

	readCtx, stopReading := context.WithCancel(ctx)
	readers := s.check.read(readCtx, s.addr, 4)
	defer func() {
		stopReading()
		readers.Wait()
	}()

	// Warm-up: one run of each trace at once, their records all read: the
	// service has met its working set before the first sample.
	warm := time.Now()
	var wg sync.WaitGroup
	for i, b := range s.bases {
		wg.Go(func() { s.publishRun(fmt.Sprintf("soak-warmup-%d", i), b, "max") })
	}
	wg.Wait()
	if err := s.waitComplete(ctx, 3*time.Minute); err != nil {
		return nil, fmt.Errorf("warm-up: %w\n%s", err, s.logTail("pipeline"))
	}
	res.warmup = time.Since(warm)
	cfg.log.Info().Dur("warmup", res.warmup).Msg("warm: sampling and the stream of runs start")

	s.start = time.Now()
	stop := make(chan struct{})
	var streams sync.WaitGroup
	for i := range cfg.streams {
		streams.Go(func() { s.stream(i, stop) })
	}
	var samplerDone = make(chan []sample)
	go func() { samplerDone <- s.sample(stop) }()
	faultsDone := make(chan []faultResult)
	go func() { faultsDone <- s.faults(ctx, stop) }()

	select {
	case <-time.After(cfg.duration):
	case <-ctx.Done():
	}
	close(stop)
	res.samples = <-samplerDone
	res.faults = <-faultsDone
	streams.Wait()
	cfg.log.Info().Int64("runs", s.published.Load()).Msg("the stream of runs stopped: waiting for every run's records")
	if err := s.waitComplete(ctx, 3*time.Minute); err != nil {
		cfg.log.Error().Err(err).Msg("runs incomplete")
	}
	res.tally = s.check.tally()
	s.evaluate(res)
	if err := writeCSV(filepath.Join(cfg.out, "soak.csv"), res.samples); err != nil {
		return res, err
	}
	var spans []span
	for _, f := range res.faults {
		spans = append(spans, span{from: f.start.Seconds(), to: f.end.Seconds(), what: f.what})
	}
	if err := writePlot(filepath.Join(cfg.out, "soak.svg"), res.samples, spans); err != nil {
		return res, err
	}
	return res, nil
}

// makeBases writes the short synthetic runs and computes every trace's
// offline records.
func (s *soak) makeBases() error {
	dir := filepath.Join(s.cfg.dir, "traces")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Short runs of StarPU's shape: 330-520 ms of trace, 1000-1700
	// lines, 2 to 4 workers.
	paths := []string{}
	for _, sy := range []struct{ tasks, workers, seed int }{{60, 2, 7}, {150, 3, 1}, {100, 4, 3}} {
		p := filepath.Join(dir, fmt.Sprintf("short-%d-%dw.trace", sy.tasks, sy.workers))
		if out, err := exec.Command(s.cfg.binary, "--log-level", "warn", "synth", "--tasks", fmt.Sprint(sy.tasks), "--workers", fmt.Sprint(sy.workers),
			"--seed", fmt.Sprint(sy.seed), "-o", p).CombinedOutput(); err != nil {
			return fmt.Errorf("synth: %v: %s", err, out)
		}
		paths = append(paths, p)
	}
	if s.cfg.realTrace != "" {
		paths = append(paths, s.cfg.realTrace)
	}
	for _, p := range paths {
		b, err := offlineReplay(s.cfg.binary, dir, p)
		if err != nil {
			return err
		}
		s.cfg.log.Info().Str("trace", p).Int("records", b.records()).Msg("offline replay")
		s.bases = append(s.bases, b)
	}
	return nil
}

// baseOf is the trace of a stream's n-th run: the short ones in turn,
// each stream starting at another, and the real trace one run in
// realEvery.
func (s *soak) baseOf(stream, n int) *base {
	short := len(s.bases)
	if s.cfg.realTrace != "" {
		short--
		if (n+stream)%s.cfg.realEvery == s.cfg.realEvery-1 {
			return s.bases[short]
		}
	}
	return s.bases[(n+stream)%short]
}

// stream publishes runs one after the other until stop, each under a new
// run id; the run under way when stop comes is finished.
func (s *soak) stream(i int, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		s.publishRun(fmt.Sprintf("soak-%d-%06d", i, n), s.baseOf(i, n), s.cfg.speed)
		select {
		case <-stop:
			return
		case <-time.After(s.cfg.gap):
		}
	}
}

// publishRun publishes one run with tracecast publish, as a running
// application would (numbered lines, an end marker), and books it.
func (s *soak) publishRun(run string, b *base, speed string) {
	r := s.check.expect(run, b)
	c := exec.Command(s.cfg.binary, "--log-format", "json", "--log-level", "warn", "publish", b.path, "--trace", run,
		"--topic", "tracecast.traces", "--brokers", s.addr, "--speed", speed)
	out, err := c.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, lastLines(out, 3))
		s.cfg.log.Error().Err(err).Str("run", run).Msg("publish failed")
	} else if len(out) > 0 {
		// Warnings (the broker down, its disk full) go to the log.
		s.appendLog("publish", out)
	}
	s.check.published(r, err)
	if err == nil {
		s.published.Add(1)
	}
}

var logMu sync.Mutex

func (s *soak) appendLog(name string, b []byte) {
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.cfg.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(b)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (s *soak) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.cfg.dir, name+".log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// waitComplete waits until every run booked has all its records, or
// within passes.
func (s *soak) waitComplete(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for !s.check.allComplete() {
		if time.Now().After(deadline) {
			t := s.check.tally()
			return fmt.Errorf("%d of %d runs complete after %v (%d records missing)", t.complete, t.runs, within, t.lost)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

func (s *soak) startBroker() error {
	c := exec.Command(s.cfg.binary, "--log-format", "json", "broker", "--addr", s.addr, "--data-dir", s.dataDir, "--topics", live.Topics)
	log, err := os.OpenFile(filepath.Join(s.cfg.dir, "broker.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	c.Stderr = log
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY") {
		c.Process.Kill()
		c.Wait()
		return fmt.Errorf("broker did not start: %q %v\n%s", line, err, s.logTail("broker"))
	}
	s.broker = c
	return nil
}

func (s *soak) stopBroker() {
	if s.broker != nil {
		s.broker.Process.Signal(syscall.SIGTERM)
		s.broker.Wait()
		s.broker = nil
	}
}

// startPipeline starts the live service as an operator does: tracecast
// run live-kafka with its shipped settings, on the soak's broker.
func (s *soak) startPipeline() error {
	log, err := os.Create(filepath.Join(s.cfg.dir, "pipeline.log"))
	if err != nil {
		return err
	}
	c := exec.Command(s.cfg.binary, "--log-format", "json", "run", "live-kafka", "--no-progress", "--brokers", s.addr, "--metrics-addr", s.metrics)
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		log.Close()
		return err
	}
	s.pipeline, s.pipelineDone = c, make(chan struct{})
	go func() {
		err := c.Wait()
		log.Close()
		if !s.stopping.Load() {
			s.died.Store(fmt.Sprintf("the live service exited during the soak: %v", err))
			s.cfg.log.Error().Err(err).Msg("the live service exited during the soak")
		}
		close(s.pipelineDone)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := scrapeMetrics(context.Background(), s.metrics); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the pipeline serves no metrics 30 s after its start\n%s", s.logTail("pipeline"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopPipeline stops the service gracefully (SIGTERM), killing it after
// 30 s.
func (s *soak) stopPipeline() {
	if s.pipeline == nil {
		return
	}
	s.stopping.Store(true)
	s.pipeline.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.pipelineDone:
	case <-time.After(30 * time.Second):
		s.pipeline.Process.Kill()
		<-s.pipelineDone
	}
}

// sample takes a sample every interval until stop.
func (s *soak) sample(stop <-chan struct{}) []sample {
	var out []sample
	t := time.NewTicker(s.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-t.C:
		}
		sm := sample{at: time.Since(s.start), fault: s.fault.Load().(string)}
		var err error
		if sm.rssMiB, sm.fds, err = procStats(s.pipeline.Process.Pid); err != nil {
			s.cfg.log.Error().Err(err).Msg("the live service's process is gone")
		}
		sc, err := scrapeMetrics(context.Background(), s.metrics)
		if err != nil {
			s.cfg.log.Warn().Err(err).Msg("scraping the live service")
		}
		sm.goroutines, sm.recordsOut = sc.goroutines, sc.recordsOut
		sm.lag = sc.lag
		if lag, ok := s.freshLag(); ok {
			sm.lag = float64(lag)
		}
		t := s.check.tally()
		sm.runs, sm.complete = int(s.published.Load()), t.complete
		out = append(out, sm)
		s.cfg.log.Info().Dur("at", sm.at.Round(time.Second)).Float64("rss_mib", sm.rssMiB).Float64("goroutines", sm.goroutines).
			Float64("fds", sm.fds).Float64("lag", sm.lag).Float64("records_out", sm.recordsOut).Int("runs", sm.runs).Str("fault", sm.fault).Msg("sample")
	}
}

// freshLag is the service's lag against the input topic's high
// watermarks read now, before the service's positions are scraped: the
// messages published before this call that it has not handled yet. ok is
// false while a partition has no position (a rebalance) or the broker
// cannot be asked.
func (s *soak) freshLag() (int64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c := &kafkago.Client{Addr: kafkago.TCP(s.addr), Timeout: 3 * time.Second}
	var reqs []kafkago.OffsetRequest
	for p := range 4 {
		reqs = append(reqs, kafkago.LastOffsetOf(p))
	}
	resp, err := c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{"tracecast.traces": reqs}})
	if err != nil {
		return 0, false
	}
	hwm := map[int]int64{}
	for _, po := range resp.Topics["tracecast.traces"] {
		if po.Error != nil {
			return 0, false
		}
		hwm[po.Partition] = po.LastOffset
	}
	pos, err := scrapeOffsets(ctx, s.metrics)
	if err != nil || len(pos) != 4 || len(hwm) != 4 {
		return 0, false
	}
	var lag int64
	for p, h := range hwm {
		o, ok := pos[p]
		if !ok {
			return 0, false
		}
		lag += max(0, h-o)
	}
	return lag, true
}

// faults injects a fault every faultEvery — a broker restart, then its
// disk full, in turn — while one can end 10 s before the soak does.
func (s *soak) faults(ctx context.Context, stop <-chan struct{}) []faultResult {
	var out []faultResult
	for k := 1; ; k++ {
		at := time.Duration(k) * s.cfg.faultEvery
		if at+s.cfg.faultLength+10*time.Second > s.cfg.duration {
			return out
		}
		select {
		case <-stop:
			return out
		case <-time.After(time.Until(s.start.Add(at))):
		}
		what := "broker restart"
		if k%2 == 0 && s.disk != nil {
			what = "broker's disk full"
		}
		f := faultResult{what: what, start: time.Since(s.start)}
		s.fault.Store(what)
		s.cfg.log.Info().Str("fault", what).Dur("for", s.cfg.faultLength).Msg("fault")
		var err error
		if what == "broker restart" {
			s.stopBroker()
			f.unready = s.watchReady(s.cfg.faultLength)
			err = s.startBroker()
		} else {
			if err = s.disk.fill(); err == nil {
				f.unready = s.watchReady(s.cfg.faultLength)
				err = s.disk.free()
			}
		}
		if err != nil {
			s.cfg.log.Error().Err(err).Str("fault", what).Msg("the fault could not be undone: the soak stops here")
			f.caughtUp = -1
			out = append(out, f)
			return out
		}
		f.end = time.Since(s.start)
		s.fault.Store("")
		f.caughtUp = -1
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if lag, ok := s.freshLag(); ok && lag == 0 {
				f.caughtUp = time.Since(s.start) - f.end
				break
			}
		}
		s.cfg.log.Info().Str("fault", what).Dur("caught_up_after", f.caughtUp).Bool("unready_during", f.unready).Msg("fault over")
		out = append(out, f)
	}
}

// watchReady waits d, polling the service's /readyz, and says whether it
// answered 503 meanwhile.
func (s *soak) watchReady(d time.Duration) bool {
	unready := false
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		resp, err := http.Get("http://" + s.metrics + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			unready = true
		}
	}
	return unready
}

// judgeGrowth is the shortest soak whose thirds are compared. Within a
// minute the service's resident set swings between 47 and 98 MiB as a
// run of the real trace comes and goes and as a broker restart makes it
// read open runs again, and a third holds a handful of samples: the
// comparison would judge where the faults fell, not a leak. Ten minutes
// give 20 samples a third and several faults in each.
const judgeGrowth = 10 * time.Minute

// evaluate applies the pass criteria.
func (s *soak) evaluate(r *result) {
	d := s.cfg.duration
	r.rss = thirds(r.samples, d, func(s sample) float64 { return s.rssMiB })
	r.gor = thirds(r.samples, d, func(s sample) float64 { return s.goroutines })
	r.fds = thirds(r.samples, d, func(s sample) float64 { return s.fds })
	for _, q := range []struct {
		name string
		t    third
	}{{"resident set (MiB)", r.rss}, {"goroutines", r.gor}, {"open descriptors", r.fds}} {
		c := criterion{what: q.name + ": last third's mean ≤ first third's + 10 %", ok: q.t.first > 0 && q.t.last <= 1.1*q.t.first,
			detail: fmt.Sprintf("%.1f → %.1f (%+.1f %%)", q.t.first, q.t.last, 100*(q.t.last/q.t.first-1))}
		if d < judgeGrowth {
			// Reported, not judged: see judgeGrowth.
			c.ok = true
			c.detail += fmt.Sprintf(" (not judged under %v)", judgeGrowth)
		}
		r.criteria = append(r.criteria, c)
	}
	died, _ := s.died.Load().(string)
	r.criteria = append(r.criteria, criterion{what: "the live service ran throughout", ok: died == "", detail: cmp.Or(died, "one process from start to end")})
	t := r.tally
	r.criteria = append(r.criteria, criterion{what: "every run's records equal the offline replay's",
		ok:     t.runs > 0 && t.complete == t.runs && t.failed == 0 && t.lost == 0 && t.changed == 0 && t.unexpected == 0,
		detail: fmt.Sprintf("%d runs (%d complete, %d not published); %d records: %d missing, %d changed, %d unexpected; %d duplicates (equal)", t.runs, t.complete, t.failed, t.records, t.lost, t.changed, t.unexpected, t.dups)})
	worst, caught := time.Duration(0), true
	for _, f := range r.faults {
		if f.caughtUp < 0 || f.caughtUp > 10*time.Second {
			caught = false
		}
		worst = max(worst, f.caughtUp)
	}
	r.criteria = append(r.criteria, criterion{what: "lag back to 0 within 10 s after each fault", ok: caught && len(r.faults) > 0,
		detail: fmt.Sprintf("%d faults, the slowest caught up after %.1f s", len(r.faults), worst.Seconds())})
}

// summary is the result as text: the criteria, the thirds, every fault.
func (r *result) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %v (after a %.1f s warm-up), a sample every %v, %d streams of runs at %s, a fault every %v lasting %v\n",
		r.cfg.duration, r.warmup.Seconds(), r.cfg.interval, r.cfg.streams, r.cfg.speed, r.cfg.faultEvery, r.cfg.faultLength)
	if r.diskNote != "" {
		fmt.Fprintf(&b, "note: %s\n", r.diskNote)
	}
	for _, c := range r.criteria {
		mark := "PASS"
		if !c.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s  %s: %s\n", mark, c.what, c.detail)
	}
	for i, f := range r.faults {
		fmt.Fprintf(&b, "fault %d: %s from %.0f s to %.0f s; /readyz 503 during it: %v; caught up %.1f s after\n", i+1, f.what, f.start.Seconds(), f.end.Seconds(), f.unready, f.caughtUp.Seconds())
	}
	fmt.Fprintf(&b, "messages read back: %d\n", r.tally.messages)
	for _, e := range r.tally.examples {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}
