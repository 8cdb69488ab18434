package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/goleak"

	"crawlq/internal/testredis"
	"crawlq/proxies"
)

// TestRunCrawlThroughAGateway runs every phase briefly through a gateway
// of 8 exit IPs and 40 session ids (D=200ms, 3s windows): the limit is
// exits/D; crawlq learned every exit it sent through, got no ban
// and broke neither I1 nor I2 on the exit IPs; the naive phase, given
// the session ids as plain lines, probed nothing; the worker child
// crawled through the gateway too; the DB is left empty.
func TestRunCrawlThroughAGateway(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := testredis.Client(t, testredis.DBBench)
	target := CrawlTarget{Client: rdb, URL: testredis.URL(t, testredis.DBBench),
		Asynq: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBBench}}
	res, err := RunCrawl(context.Background(), target, CrawlOptions{Gateway: 8, GatewaySessions: 40, Workers: 2,
		MinInterval: 200 * time.Millisecond, Duration: 3 * time.Second, RSSDuration: 2 * time.Second,
		WorkerCommand: childCommand})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawlq %+v gateway %+v", res.Crawlq, res.Crawlq.Gateway)
	t.Logf("naive %+v gateway %+v", res.Naive, res.Naive.Gateway)
	if res.Proxies != 0 || res.GatewayExits != 8 || res.GatewaySessions != 40 || res.ExitBusy != "reroll" ||
		res.LimitRPS == nil || *res.LimitRPS != 40 {
		t.Errorf("header: proxies %d, exits %d, sessions %d, exit busy %q, limit %v; want 0, 8, 40, reroll, 40",
			res.Proxies, res.GatewayExits, res.GatewaySessions, res.ExitBusy, res.LimitRPS)
	}
	c := res.Crawlq
	if c.Pages == 0 || c.Bans != 0 || c.I1Violations != 0 || c.I2Violations != 0 || c.BannedIPs != 0 {
		t.Errorf("crawlq: %d pages, %d bans, I1 %d, I2 %d, %d banned IPs; want pages and nothing else",
			c.Pages, c.Bans, c.I1Violations, c.I2Violations, c.BannedIPs)
	}
	if g := c.Gateway; g == nil || g.SitePages < c.Pages || g.Probes < int64(g.ExitsUsed) ||
		g.ExitsUsed == 0 || g.ExitsUsed > 8 || g.Sessions == 0 {
		t.Errorf("crawlq gateway figures %+v: want a probe per exit used at least, on at most 8 exits", g)
	}
	if g := res.Naive.Gateway; res.Naive.Requests == 0 || g == nil || g.Probes != 0 || g.ExitsUsed == 0 {
		t.Errorf("naive: %d requests, gateway figures %+v; want requests through the gateway and no probe", res.Naive.Requests, g)
	}
	if res.WorkerRSSMB <= 0 {
		t.Errorf("worker rss %.1f MB: the child did not crawl through the gateway", res.WorkerRSSMB)
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Errorf("%d keys left behind", n)
	}
}

func TestRunCrawlRefusesAGatewayInChallengeMode(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBBench)
	_, err := RunCrawl(context.Background(), CrawlTarget{Client: rdb}, CrawlOptions{Gateway: 4, Challenge: true})
	if err == nil || !strings.Contains(err.Error(), "gateway") {
		t.Fatalf("got %v, want the refusal of a gateway in challenge mode", err)
	}
}

func TestGatewayConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name         string
		exits, k     int
		want         int
		wantDefaults int
	}{
		{"40 exits K3: two thirds of the exits", 40, 3, 9, 9},
		{"200 exits K3", 200, 3, 45, 45},
		{"few exits: at least 4", 4, 3, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GatewayConcurrency(tc.exits, tc.k); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			o := CrawlOptions{Gateway: tc.exits, Workers: tc.k, MinInterval: 200 * time.Millisecond}.withDefaults()
			if o.Concurrency != tc.wantDefaults || o.GatewaySessions != 5*tc.exits {
				t.Errorf("defaults: concurrency %d, sessions %d; want %d, %d", o.Concurrency, o.GatewaySessions, tc.wantDefaults, 5*tc.exits)
			}
		})
	}
}

// TestPlainSessions: a gateway's slots become plain proxies of the same
// endpoint, each with a fixed session id of its own and no gateway.
func TestPlainSessions(t *testing.T) {
	slots, err := proxies.ParseReader(strings.NewReader("http://cust-session-{session}:pw@127.0.3.1:8000 sessions=3"), "gw.txt")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := plainSessions(slots, "naive")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, p := range ps {
		if p.Gateway != nil || p.Exit != nil || p.Host != "127.0.3.1" {
			t.Errorf("%+v: want a plain proxy at 127.0.3.1", p)
		}
		users = append(users, p.User)
	}
	if got := strings.Join(users, " "); got != "cust-session-naive1 cust-session-naive2 cust-session-naive3" {
		t.Errorf("users %q, want one fixed session id per slot", got)
	}
}
