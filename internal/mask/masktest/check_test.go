package masktest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"crawlq/internal/mask"
)

// fakeT records what a test would report, and runs its cleanups when
// told: the checks are shown to fail on a leak without failing this test.
type fakeT struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Name() string                   { return "TestFake" }
func (f *fakeT) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(format string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(format, a...)) }
func (f *fakeT) Logf(string, ...any)            {}

// end runs the cleanups, last first, as a test's end does.
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

var (
	proxyURL   = "http://u:" + ProxyPassword + "@127.0.0.1:8080"
	webhookURL = "https://api.telegram.org/bot42:" + WebhookToken + "/sendMessage?chat_id=1#" + WebhookFragment
	changeURL  = "http://127.0.0.1:9/changeip/" + ChangeKey
	redisURL   = "redis://:" + RedisPassword + "@127.0.0.1:6379/0"
)

// TestCaughtWhenUnmasked: a deliberately unmasked print is caught by every
// check (a log field, a log message, command output, Check), the report
// names the secret without repeating it, and the same prints masked pass.
func TestCaughtWhenUnmasked(t *testing.T) {
	for _, raw := range []string{proxyURL, webhookURL, changeURL, redisURL} {
		t.Run(raw[:strings.Index(raw, ":")], func(t *testing.T) {
			f := &fakeT{TB: t}
			Logger(f).Info("dialing", zap.String("url", raw))
			Core(f).Write(zapEntry("post to "+raw), nil)
			fmt.Fprintf(Writer(f, "crawlq proxies list"), "ID  PROXY\n1   %s\n", raw)
			Check(f, "the page", "<td>"+raw+"</td>")
			f.end()
			if len(f.errs) != 4 {
				t.Fatalf("%d reports, want one per check (4): %q", len(f.errs), f.errs)
			}
			for _, e := range f.errs {
				if strings.Contains(e, Marker) || !strings.Contains(e, "printed a planted secret: ") {
					t.Errorf("report %q: want it to say what leaked without the secret", e)
				}
			}
			ok := &fakeT{TB: t}
			Logger(ok).Info("dialing", zap.String("url", mask.URL(raw)))
			fmt.Fprintln(Writer(ok, "crawlq proxies list"), mask.URL(raw))
			Check(ok, "the page", mask.Text("error: "+raw))
			ok.end()
			if len(ok.errs) != 0 {
				t.Errorf("masked prints reported: %q", ok.errs)
			}
		})
	}
}

// TestWriterChecksAnUnfinishedLine: output without a final newline, and a
// secret split across writes, are still checked.
func TestWriterChecksAnUnfinishedLine(t *testing.T) {
	f := &fakeT{TB: t}
	w := Writer(f, "crawlq status")
	half := len(RedisPassword) / 2
	fmt.Fprint(w, "redis at redis://:"+RedisPassword[:half])
	fmt.Fprint(w, RedisPassword[half:]+"@h:1")
	f.end()
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], "<RedisPassword>") {
		t.Errorf("reports %q, want one naming <RedisPassword>", f.errs)
	}
}

// TestLateLeakFailsMain: a line written after its test ended, and a line
// on the process's stderr, fail the run Main wraps, and the lines are
// still printed.
func TestLateLeakFailsMain(t *testing.T) {
	out, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	code := run(runFunc(func() int {
		f := &fakeT{TB: t}
		w := Writer(f, "crawlq worker")
		f.end()
		fmt.Fprintln(w, "late "+proxyURL)
		fmt.Fprintln(os.Stderr, "on stderr "+changeURL)
		return 0
	}), out)
	b, _ := os.ReadFile(out.Name())
	got := string(b)
	if code != 1 || !strings.Contains(got, "TestFake: crawlq worker (after the test ended): late http://u:<ProxyPassword>@") ||
		!strings.Contains(got, "stderr: on stderr http://127.0.0.1:9/changeip/<ChangeKey>") {
		t.Errorf("exit %d, output:\n%s\nwant 1 and both leaks reported", code, got)
	}
	if !strings.Contains(got, "on stderr http://127.0.0.1:9/changeip/"+ChangeKey) {
		t.Errorf("stderr line not passed through:\n%s", got)
	}
	if code := run(runFunc(func() int { fmt.Fprintln(os.Stderr, mask.URL(changeURL)); return 0 }), out); code != 0 {
		t.Errorf("a masked stderr line failed the run (exit %d)", code)
	}
}

type runFunc func() int

func (f runFunc) Run() int { return f() }

// zapEntry is an entry whose message is msg.
func zapEntry(msg string) zapcore.Entry { return zapcore.Entry{Level: zapcore.InfoLevel, Message: msg} }
