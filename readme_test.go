//go:build unix

package tracecast_test

// The README is tested as a new user reads it.
//
// TestREADMECommands copies the repository's tracked files (`git ls-files`:
// what a fresh checkout holds, with the working tree's uncommitted edits, so
// that a README change is tested before it is committed; nothing untracked
// or ignored: no bin/, no node_modules/) into t.TempDir(), builds
// cmd/tracecast there once, puts it on PATH as `tracecast`, and runs every
// ```sh block of commandDocs, in file order, each with `bash -e -o pipefail`
// from the checkout's root, as a user following the page would: a block may
// use the files an earlier one wrote. A command that exits non-zero fails
// the test with the file, the line and the block's output.
//
// A block may carry marker comments, lines of its own that a reader sees
// and the test obeys (several may be given):
//
//	# readme-test: skip (REASON)      not run; REASON, required, is logged
//	# readme-test: needs WHAT...      skipped, saying why, unless each WHAT is
//	                                  there: a command on PATH, or tcp:PORT, a
//	                                  loopback port free for a server to take
//	# readme-test: timeout DURATION   the block's time limit (default 60s)
//	# readme-test: port PORT...       the block's commands name these loopback
//	                                  ports: they run with free ports in their
//	                                  place (":9092" in a command, not in a
//	                                  comment), whatever else listens there
//	# readme-test: service REGEXP     the block's commands are services that
//	                                  run until stopped, each in its own
//	                                  terminal: each runs as its own process,
//	                                  started once the one before has printed
//	                                  a line on standard output; the block
//	                                  passes when a line of their output
//	                                  matches REGEXP, and fails if a command
//	                                  exits with an error first or the time
//	                                  limit passes. All are then stopped as
//	                                  Ctrl-C stops them (SIGINT).
//
// Skips are for what a test cannot do: a command that runs this test
// (make test), a broker the machine does not have, a tool it lacks.
//
// The builds of the checkout (the test's and the blocks' `go run`, `make
// build`) run with -trimpath: the checkout's directory is new each time, and
// without it every package of the module would be compiled again on every
// run (a minute or more on 2 cores); with it they come from the build cache
// once it is warm. The first run on a machine compiles everything once.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// commandDocs are the pages whose sh blocks are run, in this order: the
// README, then the pages of docs/ that hold command blocks.
var commandDocs = []string{
	"README.md",
	"docs/reading.md", "docs/signals.md", "docs/forecasts.md", "docs/tasks.md", "docs/report.md",
	"docs/energy.md", "docs/io.md", "docs/outputs.md", "docs/schedulers.md", "docs/live.md", "docs/backfill.md", "docs/layout.md",
}

// unrunDocs are the pages of docs/ with sh blocks that TestREADMECommands
// does not run, and why.
var unrunDocs = map[string]string{}

// layoutDoc is the page whose "## Layout" block lists the repository's
// paths (TestLayoutList).
const layoutDoc = "docs/layout.md"

const (
	defaultBlockTimeout = 60 * time.Second
	// buildTimeout allows a cold build cache (the first run on a machine).
	buildTimeout = 15 * time.Minute
	// outputLimit bounds the output kept per block for the failure message:
	// the last bytes, where the error is.
	outputLimit = 64 << 10
	// stopGrace is how long stopped services get before SIGKILL.
	stopGrace = 15 * time.Second
)

// shBlock is one ```sh block of a page.
type shBlock struct {
	file    string
	line    int      // of the opening fence, 1-based
	lines   []string // the block's lines, indentation removed
	skip    string   // reason, when skipped
	needs   []string
	timeout time.Duration
	service *regexp.Regexp
	ports   []string // loopback ports its commands name, run with free ones instead
}

func (b shBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// fence matches a code fence line: its indentation and its info string.
var fence = regexp.MustCompile("^(\\s*)```\\s*(\\S*)\\s*$")

// parseShBlocks returns the ```sh blocks of a Markdown page with their
// markers; a malformed marker is an error naming its line.
func parseShBlocks(file string, text []byte) ([]shBlock, error) {
	var blocks []shBlock
	var cur *shBlock
	indent := ""
	inOther := false
	for i, l := range strings.Split(string(text), "\n") {
		m := fence.FindStringSubmatch(l)
		switch {
		case cur == nil && !inOther && m != nil:
			if m[2] == "sh" {
				cur = &shBlock{file: file, line: i + 1, timeout: defaultBlockTimeout}
				indent = m[1]
			} else {
				inOther = true
			}
		case inOther && m != nil && m[2] == "":
			inOther = false
		case cur != nil && m != nil && m[2] == "":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			l = strings.TrimPrefix(l, indent)
			if err := cur.marker(l); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
			}
			cur.lines = append(cur.lines, l)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: the sh block of line %d is not closed", file, cur.line)
	}
	return blocks, nil
}

// marker reads a `# readme-test:` line into the block; other lines are left
// alone.
func (b *shBlock) marker(line string) error {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# readme-test:")
	if !ok {
		return nil
	}
	key, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
	arg = strings.TrimSpace(arg)
	switch key {
	case "skip":
		reason := strings.TrimSuffix(strings.TrimPrefix(arg, "("), ")")
		if reason == "" {
			return errors.New("readme-test: skip needs a reason: skip (REASON)")
		}
		b.skip = reason
	case "needs":
		if arg == "" {
			return errors.New("readme-test: needs names nothing")
		}
		b.needs = append(b.needs, strings.Fields(arg)...)
	case "timeout":
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return fmt.Errorf("readme-test: timeout %q: want a positive duration (20s)", arg)
		}
		b.timeout = d
	case "service":
		re, err := regexp.Compile(arg)
		if err != nil || arg == "" {
			return fmt.Errorf("readme-test: service %q: want the regular expression its output must match", arg)
		}
		b.service = re
	case "port":
		for _, p := range strings.Fields(arg) {
			if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
				return fmt.Errorf("readme-test: port %q: want TCP port numbers", arg)
			}
			b.ports = append(b.ports, p)
		}
		if len(b.ports) == 0 {
			return errors.New("readme-test: port names nothing")
		}
	default:
		return fmt.Errorf("readme-test: unknown marker %q (skip, needs, timeout, service, port)", key)
	}
	return nil
}

// withFreePorts returns the block with a free loopback port in place of
// each of its ports in its commands (":9092", not followed by a digit;
// comments left as they are), so that it runs whatever else listens on the
// machine — another test's broker, a developer's own.
func (b shBlock) withFreePorts() (shBlock, error) {
	lines := slices.Clone(b.lines)
	for _, port := range b.ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return b, err
		}
		free := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		re := regexp.MustCompile(`:` + regexp.QuoteMeta(port) + `(\D|$)`)
		for i, line := range lines {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			code, comment := line, ""
			if j := strings.Index(line, " #"); j >= 0 {
				code, comment = line[:j], line[j:]
			}
			lines[i] = re.ReplaceAllString(code, ":"+free+"$1") + comment
		}
	}
	b.lines = lines
	return b, nil
}

// missing says what of the block's needs this machine lacks ("" if none).
func (b shBlock) missing() string {
	var why []string
	for _, n := range b.needs {
		if port, ok := strings.CutPrefix(n, "tcp:"); ok {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
			if err != nil {
				why = append(why, fmt.Sprintf("port %s is taken (%v)", port, err))
				continue
			}
			l.Close()
			continue
		}
		if _, err := exec.LookPath(n); err != nil {
			why = append(why, n+" is not on PATH")
		}
	}
	return strings.Join(why, "; ")
}

// commands splits a service block into its command lines, a line ending
// with a backslash joined with the next; comments and blank lines dropped.
func (b shBlock) commands() []string {
	var cmds []string
	cur := ""
	for _, l := range b.lines {
		if cur == "" && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur += s
			continue
		}
		cmds = append(cmds, cur+l)
		cur = ""
	}
	if cur != "" {
		cmds = append(cmds, cur)
	}
	return cmds
}

// TestFreePorts: a block's `port` marker has its commands run with a free
// loopback port in place of the one they name — the same one everywhere
// in the block, never a longer number that starts with it.
func TestFreePorts(t *testing.T) {
	b := shBlock{ports: []string{"9092"}, lines: []string{
		"# readme-test: port 9092",
		"tracecast live --addr 127.0.0.1:9092   # a broker on 9092",
		"tracecast subscribe --brokers localhost:9092,127.0.0.1:90921 --topic t",
	}}
	got, err := b.withFreePorts()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`127\.0\.0\.1:(\d+) `).FindStringSubmatch(got.lines[1])
	if m == nil || m[1] == "9092" {
		t.Fatalf("%q", got.lines)
	}
	want := []string{
		"# readme-test: port 9092",
		"tracecast live --addr 127.0.0.1:" + m[1] + "   # a broker on 9092",
		"tracecast subscribe --brokers localhost:" + m[1] + ",127.0.0.1:90921 --topic t",
	}
	if fmt.Sprint(got.lines) != fmt.Sprint(want) || b.lines[1] != "tracecast live --addr 127.0.0.1:9092   # a broker on 9092" {
		t.Errorf("%q\nwant %q (the original block unchanged)", got.lines, want)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+m[1])
	if err != nil {
		t.Errorf("port %s is not free: %v", m[1], err)
	} else {
		l.Close()
	}
}

func TestParseShBlocks(t *testing.T) {
	tests := []struct {
		name, text string
		want       []shBlock // only file, line, skip, needs, timeout, service's source, ports, len(lines) checked
		err        string
	}{
		{"plain", "a\n```sh\nls\n```\n", []shBlock{{line: 2, timeout: defaultBlockTimeout, lines: []string{"ls"}}}, ""},
		{"other languages ignored, even with sh inside", "```yaml\n```sh\n```\n```go\nx\n```\n", nil, ""},
		{"indented, in a list", "* x\n\n  ```sh\n  ls \\\n    -l\n  ```\n", []shBlock{{line: 3, timeout: defaultBlockTimeout, lines: []string{"ls \\", "  -l"}}}, ""},
		{"markers", "```sh\n# readme-test: skip (starts a service)\n# readme-test: needs kcat tcp:9092\n# readme-test: timeout 5s\n# readme-test: service ^READY\n# readme-test: port 9092 8080\nx\n```\n",
			[]shBlock{{line: 1, skip: "starts a service", needs: []string{"kcat", "tcp:9092"}, timeout: 5 * time.Second, service: regexp.MustCompile("^READY"),
				ports: []string{"9092", "8080"}, lines: make([]string, 6)}}, ""},
		{"bad port", "```sh\n# readme-test: port 90x\n```\n", nil, "x.md:2: readme-test: port"},
		{"skip without a reason", "```sh\n# readme-test: skip\n```\n", nil, "x.md:2: readme-test: skip needs a reason"},
		{"bad timeout", "```sh\n# readme-test: timeout 0s\n```\n", nil, "x.md:2: readme-test: timeout"},
		{"bad regexp", "```sh\n# readme-test: service (\n```\n", nil, "x.md:2: readme-test: service"},
		{"unknown marker", "```sh\n# readme-test: skipp (x)\n```\n", nil, `x.md:2: readme-test: unknown marker "skipp"`},
		{"unclosed", "```sh\nls\n", nil, "x.md: the sh block of line 1 is not closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseShBlocks("x.md", []byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d blocks, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, g := range got {
				w := tc.want[i]
				gs, ws := "", ""
				if g.service != nil {
					gs = g.service.String()
				}
				if w.service != nil {
					ws = w.service.String()
				}
				if g.line != w.line || g.skip != w.skip || strings.Join(g.needs, " ") != strings.Join(w.needs, " ") ||
					g.timeout != w.timeout || gs != ws || len(g.lines) != len(w.lines) || strings.Join(g.ports, " ") != strings.Join(w.ports, " ") {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
	b := shBlock{lines: []string{"# terminal 1", "a x \\", "  y", "", "b   # comment"}}
	if got := strings.Join(b.commands(), "|"); got != "a x   y|b   # comment" {
		t.Errorf("commands = %q", got)
	}
}

// checkout copies the tracked files of the working tree into dir.
func checkout(t *testing.T, dir string) {
	if err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skipf("not a git checkout, cannot tell the tracked files (git rev-parse: %v)", err)
	}
	var stderr bytes.Buffer
	ls := exec.Command("git", "ls-files", "-z")
	ls.Stderr = &stderr
	out, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v\n%s", err, stderr.Bytes())
	}
	n := 0
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree: not in the next commit either
		} else if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			continue // a submodule's directory
		}
		n++
	}
	if n < 100 {
		t.Fatalf("git ls-files listed only %d files", n)
	}
}

// blockEnv is the environment of the blocks: tracecast first on PATH,
// `go install` into the same directory, temporary files under tmp, and
// none of the caller's TRACECAST_ variables (brokers, TLS, ...), which
// would change what the commands do.
func blockEnv(bin, tmp string) []string {
	var env []string
	goflags := "-trimpath"
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "TRACECAST_"), k == "GOBIN", k == "TMPDIR":
		case k == "PATH":
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+v)
		case k == "GOFLAGS":
			goflags = strings.TrimSpace(v + " -trimpath")
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS="+goflags, "GOBIN="+bin, "TMPDIR="+tmp)
}

// tailBuffer keeps the last limit bytes written to it; it is safe for
// concurrent writers.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut {
		return "[... earlier output cut ...]\n" + string(b.buf)
	}
	return string(b.buf)
}

// lineWatch calls fn with each complete line written to it (a line longer
// than limit is cut: its head is passed, the rest dropped).
type lineWatch struct {
	mu      sync.Mutex
	limit   int
	partial []byte
	long    bool
	fn      func(line string)
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.fn(string(w.partial))
		w.partial, w.long = w.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWatch) add(p []byte) {
	if room := w.limit - len(w.partial); len(p) > room {
		p, w.long = p[:max(room, 0)], true
	}
	w.partial = append(w.partial, p...)
}

// groupCmd is a bash process in its own process group, so that stopping it
// stops what it started (go run's child, a pipeline's other end).
func groupCmd(dir string, env []string, script string, out io.Writer) *exec.Cmd {
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that keeps the output pipe open must not hang Wait.
	cmd.WaitDelay = stopGrace
	return cmd
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

// runBlock runs a block's lines as one bash script; the error names the
// block's line that failed.
func runBlock(b shBlock, dir, tmp string, env []string, out *tailBuffer) error {
	script := filepath.Join(tmp, "readme-block.sh")
	if err := os.WriteFile(script, []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	// LINENO in the ERR trap is the failing command's line in the script,
	// which is the block's line after the fence.
	wrapper := `trap 'echo "readme-test: exit status $? at block line $LINENO" >&2' ERR; source ` + strconv.Quote(script)
	cmd := groupCmd(dir, env, wrapper, out)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		if m := regexp.MustCompile(`readme-test: exit status \d+ at block line (\d+)`).FindAllStringSubmatch(out.String(), -1); m != nil {
			n, _ := strconv.Atoi(m[len(m)-1][1])
			return fmt.Errorf("%s:%d: %w", b.file, b.line+n, err)
		}
		return fmt.Errorf("%s: %w", b, err)
	case <-time.After(b.timeout):
		signalGroup(cmd, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s: still running after %v (a service? mark the block `# readme-test: service REGEXP`)", b, b.timeout)
	}
}

// runService runs a service block's commands side by side, as in as many
// terminals, until their output matches the block's REGEXP.
func runService(b shBlock, dir string, env []string, out *tailBuffer) error {
	cmds := b.commands()
	if len(cmds) == 0 {
		return fmt.Errorf("%s: a service block without commands", b)
	}
	matched := make(chan string, 1)
	// One watcher per stream, so that lines of different streams do not mix.
	watch := func() io.Writer {
		return &lineWatch{limit: outputLimit, fn: func(line string) {
			if b.service.MatchString(line) {
				select {
				case matched <- line:
				default:
				}
			}
		}}
	}
	type proc struct {
		cmd  *exec.Cmd
		line string
		done chan error
	}
	var procs []*proc
	exited := make(chan *proc, len(cmds))
	// stop sends Ctrl-C to every process still running, then SIGKILL
	// after stopGrace, and waits for all.
	stop := func() {
		for _, p := range procs {
			signalGroup(p.cmd, syscall.SIGINT)
		}
		deadline := time.After(stopGrace)
		for _, p := range procs {
			select {
			case <-p.done:
			case <-deadline:
				for _, q := range procs {
					signalGroup(q.cmd, syscall.SIGKILL)
				}
				<-p.done
			}
		}
	}
	defer stop()
	timeout := time.After(b.timeout)
	for i, c := range cmds {
		printed := make(chan struct{})
		var once sync.Once
		first := &lineWatch{limit: 1, fn: func(string) { once.Do(func() { close(printed) }) }}
		prefix := fmt.Sprintf("[%d] ", i+1)
		cmd := groupCmd(dir, env, c, nil)
		cmd.Stdout = io.MultiWriter(&prefixWriter{w: out, prefix: prefix}, watch(), first)
		cmd.Stderr = io.MultiWriter(&prefixWriter{w: out, prefix: prefix}, watch())
		if err := cmd.Start(); err != nil {
			return err
		}
		p := &proc{cmd: cmd, line: c, done: make(chan error, 1)}
		procs = append(procs, p)
		go func() {
			err := cmd.Wait()
			p.done <- err
			close(p.done)
			exited <- p
		}()
		if i == len(cmds)-1 {
			break
		}
		select {
		case <-printed:
		case p := <-exited:
			if err := <-p.done; err != nil {
				return fmt.Errorf("%s: %q exited: %w", b, p.line, err)
			}
		case <-timeout:
			return fmt.Errorf("%s: %q printed nothing on standard output within %v", b, c, b.timeout)
		}
	}
	for {
		select {
		case <-matched:
			return nil
		case p := <-exited:
			if err := <-p.done; err != nil {
				return fmt.Errorf("%s: %q exited: %w", b, p.line, err)
			}
		case <-timeout:
			return fmt.Errorf("%s: no line matched %q within %v", b, b.service, b.timeout)
		}
	}
}

// prefixWriter writes to w with prefix before each line (for services'
// interleaved outputs); writes are whole lines most of the time, and the
// prefix is only a label.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mid    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var buf bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if !p.mid {
			buf.WriteString(p.prefix)
		}
		buf.Write(l)
		p.mid = l[len(l)-1] != '\n'
	}
	if _, err := p.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's command blocks build the binary and run for a minute or two (make test runs them on a line of their own)")
	}
	for _, c := range []string{"git", "go", "bash"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not on PATH; the README's commands need it", c)
		}
	}
	root := t.TempDir()
	dir, bin, tmp := filepath.Join(root, "tracecast"), filepath.Join(root, "bin"), filepath.Join(root, "tmp")
	for _, d := range []string{dir, bin, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	checkout(t, dir)
	env := blockEnv(bin, tmp)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// As make build: the front binary and the full one beside it.
	for name, pkg := range map[string]string{"tracecast": "./cmd/tracecast-front", "tracecast-full": "./cmd/tracecast"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, name), pkg)
		build.Dir, build.Env = dir, env
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s in the checkout: %v\n%s", pkg, err, out)
		}
	}
	t.Logf("checkout and build: %v", time.Since(start).Round(time.Millisecond))

	for _, doc := range commandDocs {
		text, err := os.ReadFile(filepath.Join(dir, doc))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseShBlocks(doc, text)
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) == 0 {
			t.Errorf("%s has no sh block: is commandDocs out of date?", doc)
		}
		for _, b := range blocks {
			t.Run(b.String(), func(t *testing.T) {
				if b.skip != "" {
					t.Skipf("marked skip: %s", b.skip)
				}
				if why := b.missing(); why != "" {
					t.Skipf("needs %s: %s", strings.Join(b.needs, " "), why)
				}
				b, err := b.withFreePorts()
				if err != nil {
					t.Fatal(err)
				}
				out := &tailBuffer{limit: outputLimit}
				start := time.Now()
				if b.service != nil {
					err = runService(b, dir, env, out)
				} else {
					err = runBlock(b, dir, tmp, env, out)
				}
				if err != nil {
					t.Fatalf("%v\n--- the block:\n%s\n--- its output:\n%s", err, strings.Join(b.lines, "\n"), out)
				}
				t.Logf("%v", time.Since(start).Round(time.Millisecond))
			})
		}
	}

	t.Run("demo output", func(t *testing.T) { checkDemoOutput(t, dir, bin, env) })
}

// demoTiming is the one part of the demo's summary that changes from run
// to run.
var demoTiming = regexp.MustCompile(`read in [0-9.]+(ns|µs|ms|s)`)

// checkDemoOutput compares what `tracecast demo` prints with the block of
// the README's "What the demo does" section, but for the time it took.
func checkDemoOutput(t *testing.T, dir, bin string, env []string) {
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, line := demoBlock(string(readme))
	if want == "" {
		t.Fatal("README.md: no output block in the section \"What the demo does\"")
	}
	run := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "tracecast"), "demo")
	cmd.Dir, cmd.Env = run, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("tracecast demo: %v\n%s", err, stderr.Bytes())
	}
	g := demoTiming.ReplaceAllString(string(got), "read in T")
	w := demoTiming.ReplaceAllString(want, "read in T")
	if g != w {
		t.Errorf("README.md:%d shows the demo printing\n%s\nbut it prints\n%s", line, want, got)
	}
}

// demoBlock returns the first plain ``` block after the heading "## What
// the demo does", and the line of its opening fence.
func demoBlock(readme string) (string, int) {
	sc := bufio.NewScanner(strings.NewReader(readme))
	in, open := false, 0
	var b strings.Builder
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			if in && open == 0 {
				return "", 0
			}
			in = l == "## What the demo does"
		case in && open == 0 && l == "```":
			open = n
		case in && open > 0 && l == "```":
			return b.String(), open
		case in && open > 0:
			b.WriteString(l + "\n")
		}
	}
	return "", 0
}

// TestLayoutList checks the Layout section of layoutDoc against the tree:
// every path it lists exists, every package is listed, and every top-level
// directory of the repository is, or holds, a listed path.
func TestLayoutList(t *testing.T) {
	page, err := os.ReadFile(layoutDoc)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := layoutPaths(string(page))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skipf("not a git checkout, cannot tell the tree (git rev-parse: %v)", err)
	}
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	listedSet := map[string]bool{}
	for _, p := range listed {
		p = strings.TrimSuffix(p, "/")
		listedSet[p] = true
		if strings.ContainsAny(p, "*?[") {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("%s Layout lists %s: nothing matches", layoutDoc, p)
			}
			continue
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s Layout lists %s, which does not exist", layoutDoc, p)
		}
	}
	packages, top := map[string]bool{}, map[string]bool{}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	// A directory with a go.mod of its own (third_party/kafka-go) is another
	// module: listed as one line, its packages are not this module's.
	var modules []string
	for _, f := range files {
		if filepath.Base(f) == "go.mod" && f != "go.mod" {
			modules = append(modules, filepath.Dir(f)+"/")
		}
	}
	for _, f := range files {
		if _, err := os.Lstat(f); err != nil {
			continue // deleted in the working tree
		}
		if slices.ContainsFunc(modules, func(m string) bool { return strings.HasPrefix(f, m) }) {
			if first, _, ok := strings.Cut(f, "/"); ok {
				top[first] = true
			}
			continue
		}
		d := filepath.Dir(f)
		if first, _, ok := strings.Cut(f, "/"); ok && !strings.HasPrefix(first, ".") {
			top[first] = true
		}
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && d != "." &&
			!strings.Contains("/"+d+"/", "/testdata/") {
			packages[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(packages)) {
		if !listedSet[d] {
			t.Errorf("package %s/ is not in %s's Layout", d, layoutDoc)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(top)) {
		found := false
		for p := range listedSet {
			if p == d || strings.HasPrefix(p, d+"/") {
				found = true
			}
		}
		if !found {
			t.Errorf("top-level directory %s/ is not in %s's Layout", d, layoutDoc)
		}
	}
	if len(packages) < 20 {
		t.Errorf("found only %d packages in git ls-files", len(packages))
	}
}

// layoutPaths returns the paths the Layout block of a page lists: the
// first field of each line that does not start with a space, braces
// expanded (stats/{ks,surface} → stats/ks, stats/surface).
func layoutPaths(page string) ([]string, error) {
	_, rest, ok := strings.Cut(page, "\n## Layout\n")
	if !ok {
		return nil, errors.New(layoutDoc + `: no "## Layout" section`)
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		return nil, errors.New(layoutDoc + ": no block in the Layout section")
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		return nil, errors.New(layoutDoc + ": the Layout block is not closed")
	}
	var paths []string
	for _, l := range strings.Split(block, "\n") {
		if l == "" || l[0] == ' ' {
			continue
		}
		spec := strings.Fields(l)[0]
		open, close := strings.Index(spec, "{"), strings.Index(spec, "}")
		if open < 0 && close < 0 {
			paths = append(paths, spec)
			continue
		}
		if open < 0 || close < open {
			return nil, fmt.Errorf("%s Layout: unbalanced braces in %q", layoutDoc, spec)
		}
		for _, alt := range strings.Split(spec[open+1:close], ",") {
			paths = append(paths, spec[:open]+alt+spec[close+1:])
		}
	}
	return paths, nil
}

func TestLayoutPaths(t *testing.T) {
	tests := []struct {
		name, readme string
		want         []string
		err          string
	}{
		{"braces, continuations, two-column lines", "x\n## Layout\n\n```\n*.go    root\nstats/{ks,surface}  stats\n        more text\nlive/   Kafka\n```\n",
			[]string{"*.go", "stats/ks", "stats/surface", "live/"}, ""},
		{"no section", "## Other\n", nil, "no \"## Layout\" section"},
		{"unbalanced", "\n## Layout\n```\na/}b{ x\n```\n", nil, "unbalanced braces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := layoutPaths(tc.readme)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestRunBlockAndService: a failing command is reported at its line, a
// block that does not end is stopped, and a service block passes on the
// line it waits for and fails without it.
func TestRunBlockAndService(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not on PATH")
	}
	re := regexp.MustCompile
	tests := []struct {
		name    string
		lines   []string
		service *regexp.Regexp
		timeout time.Duration
		err     string // "" for success; else a substring of the error
	}{
		{"passes", []string{"# a comment", "echo a", "true"}, nil, 5 * time.Second, ""},
		{"fails at its line", []string{"echo a", "ls \\", "  /nonexistent-readme-test", "echo b"}, nil, 5 * time.Second, "x.md:13: exit status 2"},
		{"pipefail", []string{"false | cat"}, nil, 5 * time.Second, "x.md:11: exit status 1"},
		{"does not end", []string{"sleep 60"}, nil, 300 * time.Millisecond, "still running after 300ms"},
		{"service matched", []string{"echo ready; sleep 60", "echo got-it; sleep 60"}, re("^got-it$"), 10 * time.Second, ""},
		{"service never matches", []string{"echo ready; sleep 60"}, re("never"), 300 * time.Millisecond, `no line matched "never"`},
		{"service command fails", []string{"echo ready; sleep 60", "exit 3"}, re("never"), 10 * time.Second, `"exit 3" exited: exit status 3`},
		{"service silent", []string{"sleep 60", "echo x"}, re("x"), 300 * time.Millisecond, "printed nothing on standard output"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := shBlock{file: "x.md", line: 10, lines: tc.lines, timeout: tc.timeout, service: tc.service}
			out := &tailBuffer{limit: outputLimit}
			dir := t.TempDir()
			start := time.Now()
			var err error
			if tc.service != nil {
				err = runService(b, dir, os.Environ(), out)
			} else {
				err = runBlock(b, dir, dir, os.Environ(), out)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %v: the processes were not stopped", took)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q\n%s", err, tc.err, out)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{limit: 4}
	for _, s := range []string{"ab", "cdef", "g"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "[... earlier output cut ...]\ndefg" {
		t.Errorf("got %q", got)
	}
}

// TestCommandDocsListed: every page of docs/ that has a sh block is run by
// TestREADMECommands (commandDocs) or says why not (unrunDocs), and every
// page listed exists and has one: a page added with commands is tested.
func TestCommandDocsListed(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{"README.md"}, pages...) {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseShBlocks(p, text)
		if err != nil {
			t.Fatal(err)
		}
		listed, why := slices.Contains(commandDocs, p), unrunDocs[p]
		switch {
		case len(blocks) > 0 && !listed && why == "":
			t.Errorf("%s has sh blocks: add it to commandDocs (readme_test.go) so that they run, or to unrunDocs with the reason", p)
		case len(blocks) == 0 && (listed || why != ""):
			t.Errorf("%s has no sh block: take it out of commandDocs/unrunDocs", p)
		case listed && why != "":
			t.Errorf("%s is both in commandDocs and unrunDocs", p)
		}
	}
	for _, p := range commandDocs {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("commandDocs lists %s: %v", p, err)
		}
	}
}

// TestREADMELength: the README is the front door, what tracecast is and
// one example per job, at most 250 lines; the manual is docs/. (It had
// grown to 1132 lines, and crept back to 254 as features came in.)
func TestREADMELength(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 250 {
		t.Errorf("README.md has %d lines, at most 250: move the details to docs/", n)
	}
}
