package tail

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// waker wakes the follower when the file may have changed: at a file
// notification for its name (a write, a creation, a rename or removal of
// the name), or after the poll period at the latest. Notifications make
// a line reach the pipeline within the time of a wake-up instead of half a
// poll period on average; the poll stays as the fallback for file systems
// that send none (NFS, FUSE), for a watcher that failed, and for events the
// kernel dropped (a full queue is also a wake-up).
//
// The directory is watched, not the file: the name's new file after a
// rotation, or the file appearing, is seen too. The watch is set before
// the file is first read, so a write after that read is never missed: its
// event is queued until the next wait.
type waker struct {
	w     *fsnotify.Watcher // nil: polling only
	name  string
	poll  time.Duration
	timer *time.Timer
	log   zerolog.Logger
}

// newWaker watches path's directory when notify is set; a watcher that
// cannot be made (inotify limits) leaves polling, with a warning.
func newWaker(path string, notify bool, poll time.Duration, log zerolog.Logger) *waker {
	k := &waker{name: filepath.Clean(path), poll: poll, log: log}
	if !notify {
		return k
	}
	w, err := fsnotify.NewBufferedWatcher(256)
	if err == nil {
		if err = w.Add(filepath.Dir(k.name)); err != nil {
			w.Close()
		}
	}
	if err != nil {
		log.Warn().Err(err).Str("file", path).Dur("poll", poll).Msg("no file notifications: polling")
		return k
	}
	k.w = w
	return k
}

// wait returns when the file may have changed (a notification), after the
// poll period, or when ctx is done (false).
func (k *waker) wait(ctx context.Context) bool {
	if k.timer == nil {
		k.timer = time.NewTimer(k.poll)
	} else {
		k.timer.Reset(k.poll)
	}
	defer k.timer.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if k.w != nil {
		events, errs = k.w.Events, k.w.Errors
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-k.timer.C:
			return true
		case ev, ok := <-events:
			if !ok { // closed under us: poll from now on
				k.stopWatching(errors.New("watcher closed"))
				events, errs = nil, nil
				continue
			}
			if filepath.Clean(ev.Name) == k.name {
				k.drain()
				return true
			}
		case err, ok := <-errs:
			if !ok {
				k.stopWatching(errors.New("watcher closed"))
				events, errs = nil, nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				return true // events were dropped: look
			}
			k.stopWatching(err)
			events, errs = nil, nil
		}
	}
}

// drain takes the notifications already queued: one read sees what they
// announce.
func (k *waker) drain() {
	for {
		select {
		case _, ok := <-k.w.Events:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

func (k *waker) stopWatching(err error) {
	k.log.Warn().Err(err).Str("file", k.name).Dur("poll", k.poll).Msg("file notifications failed: polling")
	k.close()
}

// close releases the watcher (its goroutine ends before close returns).
func (k *waker) close() {
	if k.w != nil {
		k.w.Close()
		k.w = nil
	}
}
