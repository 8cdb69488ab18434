package demo

import (
	"fmt"
	"io"
	"os"
	"time"
)

// plainEvery is how often progress is printed when the writer is not a
// terminal (a log file or a pipe gets a line, not a redrawn one).
const plainEvery = 5 * time.Second

// progress shows the live state on one line: redrawn in place on a
// terminal, printed every plainEvery elsewhere.
type progress struct {
	w       io.Writer
	tty     bool
	total   time.Duration
	last    time.Time
	redrawn bool
	printed bool
}

func newProgress(w io.Writer, total time.Duration) *progress {
	return &progress{w: w, tty: isTerminal(w), total: total}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// show prints s at elapsed time since the first enqueue.
func (p *progress) show(s snapshot, elapsed time.Duration) {
	line := fmt.Sprintf("%3.0fs/%s  jobs %d: done %d, failed %d, retrying %d, waiting %d | pages %d, items %d | failed attempts %d, blocked %d, bans %d",
		elapsed.Seconds(), p.total, s.Total.Jobs, s.Total.Completed, s.Total.Failed, s.Retrying,
		s.Total.Unfinished-s.Retrying, s.Total.Pages, s.Total.Items, s.Total.FailedAttempts, s.Total.Blocked, s.Total.Bans)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.redrawn = true
		return
	}
	if now := time.Now(); !p.printed || now.Sub(p.last) >= plainEvery {
		fmt.Fprintln(p.w, line)
		p.last, p.printed = now, true
	}
}

// notice prints a message on its own line, keeping the progress line.
func (p *progress) notice(format string, args ...any) {
	p.end()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// end finishes a redrawn line.
func (p *progress) end() {
	if p.redrawn {
		fmt.Fprintln(p.w)
		p.redrawn = false
	}
}
