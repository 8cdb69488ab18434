package masktest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
)

// Check fails t for every line of text (printed at where: a command, a
// page) that shows a planted secret.
func Check(t testing.TB, where, text string) {
	t.Helper()
	for _, l := range leaks(text) {
		t.Errorf("%s printed a planted secret: %s", where, l)
	}
}

// checker collects the leaks of one test's writers and log lines; they
// fail the test when it ends, or the binary (Main) if they come later.
type checker struct {
	mu    sync.Mutex
	name  string
	ended bool
	found []string
	part  []byte // an unfinished line
}

func newChecker(t testing.TB, where string) *checker {
	c := &checker{name: t.Name() + ": " + where}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.scan(c.part)
		c.part, c.ended = nil, true
		c.name += " (after the test ended)"
		for _, l := range c.found {
			t.Errorf("%s printed a planted secret: %s", where, l)
		}
	})
	return c
}

// Write checks p line by line.
func (c *checker) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.part = append(c.part, p...)
	if i := bytes.LastIndexByte(c.part, '\n'); i >= 0 {
		c.scan(c.part[:i])
		c.part = append(c.part[:0], c.part[i+1:]...)
	}
	return len(p), nil
}

// Sync is there for zapcore.WriteSyncer.
func (c *checker) Sync() error { return nil }

func (c *checker) scan(b []byte) {
	found := leaks(string(b))
	if c.ended {
		late.add(c.name, found)
		return
	}
	c.found = append(c.found, found...)
}

// Writer is an io.Writer for a command's output (where names it) whose
// every line is checked for the planted secrets; a leak fails t.
func Writer(t testing.TB, where string) io.Writer { return newChecker(t, where) }

// Core is a zap core that checks every entry, all its fields encoded, for
// the planted secrets; a leak fails t. Tee it with a test's own core.
func Core(t testing.TB) zapcore.Core {
	enc := zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig())
	return zapcore.NewCore(enc, newChecker(t, "the log"), zapcore.DebugLevel)
}

// Logger is zaptest.NewLogger(t) whose lines are also checked by Core.
func Logger(t testing.TB) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, Core(t))
	})))
}

// lateLeaks are leaks written after their test ended; Main reports them.
type lateLeaks struct {
	mu    sync.Mutex
	found []string
}

var late lateLeaks

func (l *lateLeaks) add(where string, found []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range found {
		l.found = append(l.found, where+": "+f)
	}
}

func (l *lateLeaks) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.found
	l.found = nil
	return f
}

// runner is what Main runs: a *testing.M.
type runner interface{ Run() int }

// Main runs the tests with the process's stderr passed through a check
// (lines are still printed), and fails the run (exit code 1) if stderr, or
// a Writer or Core after its test ended, showed a planted secret.
func Main(m runner) int { return run(m, os.Stderr) }

func run(m runner, out *os.File) int {
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(out, "masktest:", err)
		return 1
	}
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := &checker{name: "stderr", ended: true} // every leak goes to late
		_, _ = io.Copy(io.MultiWriter(out, c), r)
		_, _ = c.Write([]byte("\n"))
	}()
	code := m.Run()
	os.Stderr = out
	_ = w.Close()
	<-done
	_ = r.Close()
	found := late.take()
	for _, f := range found {
		fmt.Fprintln(out, "masktest: a planted secret was printed:", strings.TrimSpace(f))
	}
	if len(found) > 0 && code == 0 {
		fmt.Fprintln(out, "FAIL: a planted secret was printed (see internal/mask/masktest)")
		return 1
	}
	return code
}
