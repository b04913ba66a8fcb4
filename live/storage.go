package live

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"weak"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// StorageReserve is the free space the broker keeps in its data directory:
// a produce request is answered KAFKA_STORAGE_ERROR when the directory has
// less than twice its size plus this left (room for the segment's index,
// the offset commits and the topics' state).
const StorageReserve = 1 << 20

// WarnEvery is how often the broker repeats a warning while its cause
// lasts (the first one is logged at once).
const WarnEvery = 30 * time.Second

// storage guards a broker's data directory: a produce request that the
// directory has no room for is answered KAFKA_STORAGE_ERROR, as a Kafka
// broker answers for a log directory that failed, naming the cause and the
// directory, while fetches go on; clients retry it as an outage. kfake's
// own write failures (it answered UNKNOWN_SERVER_ERROR, which clients do
// not retry: the live service stopped after 165 of them) are logged with
// their file and cause, collapsed.
type storage struct {
	dir  string
	free func(dir string) (int64, error)
	log  *repeats

	refused, failures atomic.Int64 // produce requests refused; kfake's failed writes
	mu                sync.Mutex
	full              bool      // refusing produce requests
	since             time.Time // when it started refusing
	lastCause         string
}

// statfsFree is the space a process may use in dir's filesystem.
func statfsFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// storages maps each started cluster (weakly: a closed cluster is not
// kept) to its storage guard, for its metrics (NewBrokerCollector).
var storages sync.Map // weak.Pointer[kfake.Cluster] -> *storage

func storageOf(c *kfake.Cluster) *storage {
	if v, ok := storages.Load(weak.Make(c)); ok {
		return v.(*storage)
	}
	return nil
}

// guardStorage installs the produce guard on c.
func guardStorage(c *kfake.Cluster, st *storage) {
	key := weak.Make(c)
	storages.Store(key, st)
	runtime.AddCleanup(c, func(k weak.Pointer[kfake.Cluster]) { storages.Delete(k) }, key)
	c.ControlKey(kmsg.Produce.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.ProduceRequest)
		need := 0
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				need += len(p.Records)
			}
		}
		why := st.room(int64(need))
		if why == "" {
			return nil, nil, false // kfake stores it
		}
		st.refused.Add(1)
		if req.Acks == 0 {
			return nil, nil, true // no answer expected: dropped, as a full broker would
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rp.ErrorCode = kerr.KafkaStorageError.Code
				msg := why
				rp.ErrorMessage = &msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

// room says why a produce of need bytes cannot be stored ("" when it can),
// logging when the broker starts and stops refusing.
func (st *storage) room(need int64) string {
	free, err := st.free(st.dir)
	if err != nil {
		return "" // unknown: let the store try (and fail, logged)
	}
	want := 2*need + StorageReserve
	st.mu.Lock()
	defer st.mu.Unlock()
	if free >= want {
		if st.full {
			st.full = false
			st.log.log.Info().Str("data_dir", st.dir).Int64("free_bytes", free).Int64("refused", st.refused.Load()).
				Dur("after", time.Since(st.since).Round(time.Millisecond)).
				Msg(fmt.Sprintf("broker: %s has room again (%d bytes free): storing produce requests again after %v", st.dir, free, time.Since(st.since).Round(time.Second)))
			st.log.reset()
		}
		return ""
	}
	why := fmt.Sprintf("KAFKA_STORAGE_ERROR: no space left on device in the broker's data directory %s (%d bytes free, %d needed)", st.dir, free, want)
	if !st.full {
		st.full, st.since = true, time.Now()
	}
	st.lastCause = why
	st.log.warn("refused", fmt.Sprintf("broker: no space left on device in %s (%d bytes free): answering produce requests with KAFKA_STORAGE_ERROR until there is room (free some space or grow the filesystem); fetches go on", st.dir, free))
	return why
}

// Full reports whether the broker refuses produce requests for want of
// space, and why.
func (st *storage) state() (full bool, cause string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.full, st.lastCause
}

// kfakeLogger passes kfake's warnings and errors to log, collapsed (a
// warning repeated within WarnEvery is counted, not logged), and counts
// its failed writes to the data directory.
type kfakeLogger struct {
	st  *storage // nil without a data directory
	log *repeats
}

func (l *kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	if level > kfake.LogLevelWarn {
		return
	}
	msg := fmt.Sprintf(format, args...)
	storageErr := false
	for _, a := range args {
		if err, ok := a.(error); ok && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS)) {
			storageErr = true
		}
	}
	if storageErr && l.st != nil {
		l.st.failures.Add(1)
		msg = "broker: cannot write its data directory " + l.st.dir + ": " + msg
	} else {
		msg = "broker: " + msg
	}
	l.log.warn(msg, msg)
}

// repeats logs a warning the first time, then at most once per WarnEvery
// for as long as it repeats, with the number of repeats since: "…
// (×165 since the last warning)". It holds at most maxRepeats keys.
type repeats struct {
	log   zerolog.Logger
	every time.Duration
	mu    sync.Mutex
	seen  map[string]*repeat
}

type repeat struct {
	last time.Time
	n    int
}

const maxRepeats = 1024

func newRepeats(log zerolog.Logger) *repeats {
	return &repeats{log: log, every: WarnEvery, seen: map[string]*repeat{}}
}

// warn logs msg unless key was logged less than every ago (then counts it).
func (r *repeats) warn(key, msg string) {
	r.mu.Lock()
	now := time.Now()
	e := r.seen[key]
	if e == nil {
		if len(r.seen) >= maxRepeats {
			clear(r.seen)
		}
		e = &repeat{}
		r.seen[key] = e
	} else if now.Sub(e.last) < r.every {
		e.n++
		r.mu.Unlock()
		return
	}
	n := e.n
	e.last, e.n = now, 0
	r.mu.Unlock()
	if n > 0 {
		msg = strings.TrimSuffix(msg, ".") + fmt.Sprintf(" (×%d since the last warning)", n+1)
	}
	r.log.Warn().Msg(msg)
}

// reset forgets what was logged: the next occurrence is logged at once.
func (r *repeats) reset() {
	r.mu.Lock()
	clear(r.seen)
	r.mu.Unlock()
}
