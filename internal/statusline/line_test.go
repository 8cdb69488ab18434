package statusline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeClock is moved by the test.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestPlainWriterGetsALinePerInterval(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, 10*time.Second)
	if l.tty {
		t.Fatal("a bytes.Buffer was taken for a terminal")
	}
	ck := &fakeClock{t: time.Unix(0, 0)}
	l.now = ck.now
	// 300 updates, one per 500ms: 150 s of waiting.
	for i := range 300 {
		l.Show(fmt.Sprintf("%d/300 done", i))
		ck.t = ck.t.Add(500 * time.Millisecond)
	}
	l.End()
	out := buf.String()
	if strings.ContainsAny(out, "\r\033") {
		t.Fatalf("plain output has terminal control characters: %q", out[:min(len(out), 80)])
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 15 {
		t.Fatalf("150 s gave %d lines, want 15 (one per 10 s):\n%s", len(lines), out)
	}
	if lines[0] != "0/300 done" || lines[1] != "20/300 done" {
		t.Fatalf("lines start %q, %q; want the first update, then the one 10 s later", lines[0], lines[1])
	}
}

func TestTerminalRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	l := &Line{w: &buf, tty: true, every: DefaultEvery, now: time.Now}
	l.Show("1/2")
	l.Show("2/2")
	l.Notice("done")
	if want := "\r\033[K1/2\r\033[K2/2\ndone\n"; buf.String() != want {
		t.Fatalf("terminal output %q, want %q", buf.String(), want)
	}
}
