package sessions_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// Child processes: the test binary re-runs itself with CRAWLQ_SESSIONS_CHILD
// set, playing another server of the cluster against the same Redis and
// testbed.
const childEnv = "CRAWLQ_SESSIONS_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(masktest.Main(m))
}

// childWorld rebuilds a broker, fetcher and detector from the environment.
type childWorld struct {
	m       *sessions.Manager
	fetcher *fetcher.Fetcher
	detect  *detect.Detector
	siteURL string
}

func newChildWorld(holder string, ttl time.Duration) (*childWorld, error) {
	rdb := testredis.NewClientAt(os.Getenv("CRAWLQ_CHILD_REDIS"), testredis.DBSessions)
	sites := map[string]proxies.SiteConfig{}
	for site, r := range testbed.DefaultRules() {
		sites[site] = proxies.SiteConfig{MinInterval: r.MinInterval}
	}
	b := proxies.NewRedisBroker(rdb, proxies.Config{Sites: sites})
	return &childWorld{
		m:       sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, Holder: holder, LeaseTTL: ttl}),
		fetcher: fetcher.New(fetcher.Config{Timeout: 5 * time.Second}),
		detect:  detect.New(detect.Builtin()), siteURL: os.Getenv("CRAWLQ_CHILD_SITE"),
	}, nil
}

func runChild(role string) int {
	w, err := newChildWorld("child-"+strconv.Itoa(os.Getpid()), 30*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	switch role {
	case "abandon":
		return w.abandon()
	case "crawl":
		return w.crawl()
	}
	return 2
}

// abandon opens a session, fetches one page and waits to be killed.
func (w *childWorld) abandon() int {
	ctx := context.Background()
	s, err := w.m.Open(ctx, "job-abandoned", wb, proxies.Datacenter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	if step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.siteURL, 1), 1); err != nil || step.Verdict.Kind != detect.OK {
		fmt.Fprintln(os.Stderr, "get:", step.Verdict, err)
		return 1
	}
	fmt.Println("READY", s.ProxyID())
	select {} // killed here
}

// crawl runs 4 goroutines of 3-page sessions on one site.
func (w *childWorld) crawl() int {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				if err := w.job(ctx, fmt.Sprintf("job-%d-%d-%d", os.Getpid(), g, j)); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func (w *childWorld) job(ctx context.Context, task string) error {
	s, err := w.m.Open(ctx, task, wb, proxies.Datacenter)
	if err != nil {
		return fmt.Errorf("%s: open: %w", task, err)
	}
	for page := 1; page <= 3; page++ {
		step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.siteURL, page), page)
		if err != nil || step.Verdict.Kind != detect.OK {
			return fmt.Errorf("%s page %d: %v %v", task, page, step.Verdict, err)
		}
	}
	return s.Finish(ctx, proxies.OK(0))
}

func child(t *testing.T, role string, w *world) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role,
		"CRAWLQ_CHILD_REDIS="+testredis.Addr(t), "CRAWLQ_CHILD_SITE="+w.tb.SiteURL(wb))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestAbandonedSessionResumesInAnotherProcess: a process opens a session
// and is killed; another process resumes it with the same IP and cookies.
func TestAbandonedSessionResumesInAnotherProcess(t *testing.T) {
	w := newWorld(t, 3)
	cmd := child(t, "abandon", w)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY ") {
		_ = cmd.Process.Kill()
		t.Fatalf("child said %q, %v", line, err)
	}
	proxyID := strings.TrimSpace(strings.TrimPrefix(line, "READY "))
	_ = cmd.Process.Kill() // kill -9: no release, the lease is left behind
	_ = cmd.Wait()

	ctx := context.Background()
	s, err := w.manager("server-2", 10*time.Second).Open(ctx, "job-abandoned", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !s.Resumed() || s.ProxyID() != proxyID {
		t.Fatalf("resumed=%v proxy %s; want the abandoned session's proxy %s", s.Resumed(), s.ProxyID(), proxyID)
	}
	step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.tb.SiteURL(wb), 2), 2)
	if err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("page 2 after resume: %v %v", step.Verdict, err)
	}
	_ = s.Finish(ctx, proxies.OK(0))
	es := siteEntries(w.tb, wb)
	if len(es) != 2 || es[1].IP != es[0].IP || es[1].Session != es[0].Session || es[1].Issued {
		t.Fatalf("testbed log %+v: want page 2 from the same IP with the same session cookie", es)
	}
	if r := w.tb.Check(); !r.OK() {
		t.Errorf("invariants broken: %+v", r)
	}
}

// TestThreeProcessesKeepI1AndI2: three processes share a small pool on one
// site; the site sees no overlapping and no too-close requests per IP.
func TestThreeProcessesKeepI1AndI2(t *testing.T) {
	w := newWorld(t, 4)
	var cmds []*exec.Cmd
	for i := 0; i < 3; i++ {
		cmd := child(t, "crawl", w)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start child %d: %v", i, err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
	r := w.tb.Check()
	if r.Requests != 3*4*3*3 || !r.OK() {
		t.Fatalf("requests %d (want 108), I1 %d, I2 %d: %v", r.Requests, r.I1Violations, r.I2Violations, r.Details)
	}
	for ip, n := range r.BansPerIP {
		if n > 0 {
			t.Errorf("ip %s was banned %d times", ip, n)
		}
	}
}
