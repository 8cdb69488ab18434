package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"crawlq/internal/mask/masktest"
)

// TestDemoKeepsDashboardOnTerminal runs crawlq demo on a pseudo-terminal
// without flags: after the summary the dashboard still answers, until the
// interrupt ends the demo cleanly. crawlq is the test binary running main
// (mainEnv), as in runMain: no second build of the command.
func TestDemoKeepsDashboardOnTerminal(t *testing.T) {
	raw, _ := json.Marshal([]string{"demo", "--listen", "127.0.0.1:0"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CRAWLQ_REDIS=", mainEnv+"="+string(raw))
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("start on a pty: %v", err)
	}
	defer tty.Close()
	exited := make(chan error, 1)
	lines := make(chan string, 256)
	printed := masktest.Writer(t, "crawlq demo")
	go func() {
		sc := bufio.NewScanner(tty)
		for sc.Scan() {
			fmt.Fprintln(printed, sc.Text())
			lines <- sc.Text()
		}
		close(lines)
	}()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	url := waitLine(t, lines, regexp.MustCompile(`dashboard still at (http://\S+); Ctrl-C to stop`), 3*time.Minute)
	if code := httpStatus(t, url); code != http.StatusOK {
		t.Fatalf("GET %s after the jobs finished: %d, want 200", url, code)
	}
	if code := httpStatus(t, url+"api/summary"); code != http.StatusOK {
		t.Fatalf("GET %sapi/summary after the jobs finished: %d, want 200", url, code)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() { exited <- cmd.Wait() }()
	for range lines { // drain so the demo never blocks on the pty
	}
	if err := <-exited; err != nil {
		t.Fatalf("demo after Ctrl-C: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("dashboard %s still answers after the demo ended", url)
	}
}

// waitLine returns the first submatch of the first line matching re.
func waitLine(t *testing.T, lines <-chan string, re *regexp.Regexp, d time.Duration) string {
	t.Helper()
	timeout := time.After(d)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("demo ended without %q; output:\n%s", re, strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("no line %q within %s; output:\n%s", re, d, strings.Join(seen, "\n"))
		}
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
