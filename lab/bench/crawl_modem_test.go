package bench

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/goleak"

	"crawlq/internal/testredis"
	"crawlq/testbed"
)

// TestRunModemCrawl runs the three modem phases briefly through 2 modems
// (D=200ms, a volume of 5 requests in 3s, changes 500ms apart settling
// 200ms, rotate_after 3): no phase sent a request through a settling
// modem, changed one sooner than its interval or broke I1/I2 on an exit
// IP; the rotation phases rotated; before the ban, no ban. Speed is
// not asserted.
func TestRunModemCrawl(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := testredis.Client(t, testredis.DBBench)
	target := CrawlTarget{Client: rdb, URL: testredis.URL(t, testredis.DBBench),
		Asynq: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBBench}}
	res, err := RunModemCrawl(context.Background(), target, CrawlOptions{Modems: 2, Workers: 2,
		MinInterval: 200 * time.Millisecond, Duration: 4 * time.Second,
		Volume: testbed.VolumeRule{Requests: 5, Window: 3 * time.Second}, ChangeEvery: 500 * time.Millisecond,
		ChangeSettle: 200 * time.Millisecond, RotateAfter: 3})
	if err != nil {
		t.Fatal(err)
	}
	for name, ph := range map[string]ModemPhase{ModemQuarantine: res.Quarantine, ModemRotateOnBan: res.RotateOnBan,
		ModemRotateBefore: res.RotateBefore} {
		t.Logf("%s: %.1f pages/s, %d bans, %d rotations (p50 %gms), %d refused, %d failed", name, ph.RPS, ph.Bans,
			ph.Rotations, ph.RotationP50MS, ph.Refusals, ph.RotationFailed)
		if !ph.Clean() {
			t.Errorf("%s: %d requests while settling, %d changes too soon, I1 %d, I2 %d; want 0",
				name, ph.WhileSettling, ph.TooSoon, ph.I1Violations, ph.I2Violations)
		}
		if ph.Requests == 0 {
			t.Errorf("%s: the site saw no request", name)
		}
	}
	if q := res.Quarantine; q.Rotations != 0 || q.Bans == 0 {
		t.Errorf("quarantine: %d rotations, %d bans; want none (no change links) and bans", q.Rotations, q.Bans)
	}
	if on := res.RotateOnBan; on.Rotations == 0 || on.Bans == 0 || on.RotationP50MS <= 0 {
		t.Errorf("rotate on ban: %d rotations, %d bans, p50 %gms; want bans and rotations", on.Rotations, on.Bans, on.RotationP50MS)
	}
	if b := res.RotateBefore; b.Rotations == 0 || b.Bans != 0 {
		t.Errorf("rotate before the ban: %d rotations, %d bans; want rotations and no ban", b.Rotations, b.Bans)
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Errorf("%d keys left behind", n)
	}
}

// TestModemCrawlLearnsTheVolume: the rotate-before phase with
// rotate_after auto through 2 modems (D=200ms, a volume of 5 requests in
// 3s): the site's budget is learned from at most 3 bans (its canary's,
// for the site, not one per modem) and no IP is banned after it.
func TestModemCrawlLearnsTheVolume(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := testredis.Client(t, testredis.DBBench)
	target := CrawlTarget{Client: rdb, URL: testredis.URL(t, testredis.DBBench),
		Asynq: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBBench}}
	res, err := RunModemCrawl(context.Background(), target, CrawlOptions{Modems: 2, Workers: 2,
		MinInterval: 200 * time.Millisecond, Duration: 4 * time.Second, ModemPhases: []string{ModemRotateBefore}, LearnVolume: true,
		Volume: testbed.VolumeRule{Requests: 5, Window: 3 * time.Second}, ChangeEvery: 500 * time.Millisecond,
		ChangeSettle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ph := res.RotateBefore
	t.Logf("%.1f pages/s, budget %d, %d bans to learn it, %d after, %d rotations", ph.RPS, ph.LearnedBudget, ph.BansToLearn, ph.BansAfter, ph.Rotations)
	if ph.LearnedBudget < 1 || ph.LearnedBudget > 5 || ph.BansToLearn > 3 || ph.BansAfter != 0 || !ph.Clean() {
		t.Errorf("budget %d (want 1..5), bans %d to learn it (want at most 3), %d after (want 0), clean %v", ph.LearnedBudget,
			ph.BansToLearn, ph.BansAfter, ph.Clean())
	}
}
