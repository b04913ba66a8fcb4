package kafkaconn

import (
	"sync"
	"time"
)

// Repeats collapses a warning that comes again and again while its cause
// lasts — a reader retrying a broker that is down, every half second per
// partition — into one line at once, then one per Every with the count
// since, and one when it is over: a 10 s broker restart logged 40 lines
// of the kafka source's "fetching; retrying", one a retry. Safe for
// concurrent use (the partitions' readers share one).
type Repeats struct {
	// Every is the interval between warnings (0: DefaultWarnEvery).
	Every time.Duration

	mu     sync.Mutex
	first  time.Time // the first occurrence of the current run, zero when none
	warned time.Time // when Note last said to warn
	count  int       // occurrences since the first
	since  int       // occurrences since the last warning
}

// Note books one occurrence and says whether to warn now (the first
// occurrence, then once per Every) and how many occurrences the warning
// stands for (1 for the first; then those since the last warning).
func (r *Repeats) Note() (warn bool, times int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	every := r.Every
	if every <= 0 {
		every = DefaultWarnEvery
	}
	if r.count == 0 {
		r.first = now
	}
	r.count++
	r.since++
	if r.count == 1 || now.Sub(r.warned) >= every {
		times = r.since
		r.warned, r.since = now, 0
		return true, times
	}
	return false, 0
}

// Over ends the current run of occurrences: how many there were and how
// long since the first (0, 0 when there were none, so that a caller logs
// a recovery only after a failure).
func (r *Repeats) Over() (times int, lasted time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == 0 {
		return 0, 0
	}
	times, lasted = r.count, time.Since(r.first)
	r.count, r.since, r.first = 0, 0, time.Time{}
	return times, lasted
}
