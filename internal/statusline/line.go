package statusline

import (
	"fmt"
	"io"
	"os"
	"time"
)

// DefaultEvery is how often a plain (not terminal) writer gets a line.
const DefaultEvery = 10 * time.Second

// Line is one status line on w. Not safe for concurrent use.
type Line struct {
	w     io.Writer
	tty   bool
	every time.Duration
	now   func() time.Time

	last    time.Time
	printed bool // a plain line has been printed
	redrawn bool // a terminal line is open (no newline yet)
}

// New returns a Line on w: redrawn in place when w is a terminal, else
// printed at most once per every (DefaultEvery when every <= 0).
func New(w io.Writer, every time.Duration) *Line {
	if every <= 0 {
		every = DefaultEvery
	}
	return &Line{w: w, tty: IsTerminal(w), every: every, now: time.Now}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Show replaces the status with s: redrawn on a terminal; elsewhere
// printed if it is the first or the last print was every ago.
func (l *Line) Show(s string) {
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s", s)
		l.redrawn = true
		return
	}
	if now := l.now(); !l.printed || now.Sub(l.last) >= l.every {
		fmt.Fprintln(l.w, s)
		l.last, l.printed = now, true
	}
}

// Notice prints a message on a line of its own, after the status line.
func (l *Line) Notice(format string, args ...any) {
	l.End()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// End closes a redrawn terminal line, so what follows starts on a new one.
func (l *Line) End() {
	if l.redrawn {
		fmt.Fprintln(l.w)
		l.redrawn = false
	}
}
