package demo

import (
	"fmt"
	"io"
	"time"

	"crawlq/internal/statusline"
)

// progress shows the demo's live state on one line: redrawn in place on a
// terminal, printed every statusline.DefaultEvery elsewhere.
type progress struct {
	*statusline.Line
	total time.Duration
}

func newProgress(w io.Writer, total time.Duration) *progress {
	return &progress{Line: statusline.New(w, statusline.DefaultEvery), total: total}
}

// show prints s at elapsed time since the first enqueue.
func (p *progress) show(s snapshot, elapsed time.Duration) {
	p.Show(fmt.Sprintf("%3.0fs/%s  jobs %d: done %d, failed %d, retrying %d, waiting %d | pages %d, items %d | failed attempts %d, blocked %d, bans %d",
		elapsed.Seconds(), p.total, s.Total.Jobs, s.Total.Completed, s.Total.Failed, s.Retrying,
		s.Total.Unfinished-s.Retrying, s.Total.Pages, s.Total.Items, s.Total.FailedAttempts, s.Total.Blocked, s.Total.Bans))
}

// notice prints a message on its own line, keeping the progress line.
func (p *progress) notice(format string, args ...any) { p.Notice(format, args...) }
