package proxies

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestVolumeBudgetLearnedFromTheCanarysBan: under rotate_after auto, with
// no budget learned one IP is the canary and sends on while another IP
// rotates one request short of the canary's count; the canary's ban
// after 11 requests teaches the site's budget (90 % of the 10 before
// it: 9), which every IP keeps from then on; a later ban lower down (6
// requests: 4) lowers it, one higher up (9 requests) does not raise it;
// a site without auto learns nothing.
func TestVolumeBudgetLearnedFromTheCanarysBan(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval, RotateAfterAuto: true})
	sends := func(ip string, n int) int {
		t.Helper()
		for i := range n {
			a, err := b.ModemSend(ctx, m, "av", ip)
			if err != nil {
				t.Fatal(err)
			}
			if a != ModemSendOK {
				return i
			}
		}
		return n
	}
	if got := sends("10.0.0.1", 4); got != 4 {
		t.Fatalf("the canary sent %d of 4", got)
	}
	if got := sends("10.0.0.2", 10); got != 3 {
		t.Fatalf("another IP sent %d before rotating, want 3 (one short of the canary's 4)", got)
	}
	if got := sends("10.0.0.1", 7); got != 7 {
		t.Fatalf("the canary sent %d of 7 more", got)
	}
	if err := b.ModemBanned(ctx, m, "av", "10.0.0.1"); err != nil { // banned at its 11th
		t.Fatal(err)
	}
	l, err := b.Limit(ctx, VolumeLimitName("av"))
	if err != nil || l.Value != 9 || l.Unit != "requests" || !strings.Contains(l.Reason, "after 11 requests") {
		t.Fatalf("budget %+v, %v; want 9 requests learned from the ban after 11", l, err)
	}
	if got := sends("10.0.0.3", 20); got != 9 {
		t.Fatalf("a new IP sent %d, want the budget's 9", got)
	}
	ck.advance(time.Second)
	if got := sends("10.0.0.4", 6); got != 6 {
		t.Fatalf("sent %d of 6", got)
	}
	for _, ban := range []struct {
		ip   string
		want int64
	}{{"10.0.0.4", 4}, {"10.0.0.3", 4}} {
		if err := b.ModemBanned(ctx, m, "av", ban.ip); err != nil {
			t.Fatal(err)
		}
		if l, err := b.Limit(ctx, VolumeLimitName("av")); err != nil || l.Value != ban.want {
			t.Fatalf("after the ban of %s: budget %+v, %v; want %d", ban.ip, l, err, ban.want)
		}
	}
	if err := b.ModemBanned(ctx, m, "oz", "10.0.0.5"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Limit(ctx, VolumeLimitName("oz")); err == nil {
		t.Fatal("a site without rotate_after auto learned a budget")
	}
}
