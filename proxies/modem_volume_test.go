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

// TestPlainProxyRestsUntilItsCountStartsOver: for a proxy that is not a
// modem, VolumeSend keeps the site's learned budget (rotate_after auto):
// while none is learned an IP that has sent as many as the canary, less
// one, rests TrailRest (the canary sends on); with a budget of 3 over a
// 10 s count (rotate_every) the fourth request is refused with the rest
// until the count starts over, shorter as time passes; none is counted
// as a modem's request. A number given to rotate_after is the modems'
// alone. A lease released with Rest is not leased again until its rest
// is over.
func TestPlainProxyRestsUntilItsCountStartsOver(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, _ := modemPool(t, ck, SiteConfig{MinInterval: time.Second, RotateAfterAuto: true, RotateEvery: 10 * time.Second})
	plain, err := ParseLine("http://127.0.0.2:3128")
	if err != nil {
		t.Fatal(err)
	}
	const canary, ip = "10.9.9.9", "127.0.0.2"
	for i := range 3 {
		if rest, err := b.VolumeSend(ctx, "av", canary); err != nil || rest != 0 {
			t.Fatalf("the canary's request %d: rest %v, %v; want sent", i+1, rest, err)
		}
	}
	for i := range 2 {
		if rest, err := b.VolumeSend(ctx, "av", ip); err != nil || rest != 0 {
			t.Fatalf("request %d behind the canary's 3: rest %v, %v; want sent", i+1, rest, err)
		}
	}
	if rest, err := b.VolumeSend(ctx, "av", ip); err != nil || rest != TrailRest {
		t.Fatalf("a third request behind the canary's 3: rest %v, %v; want %v", rest, err, TrailRest)
	}
	if err := b.PinLimit(ctx, VolumeLimitName("av"), 3); err != nil {
		t.Fatal(err)
	}
	if rest, err := b.VolumeSend(ctx, "av", ip); err != nil || rest != 0 {
		t.Fatalf("the third request within a budget of 3: rest %v, %v; want sent", rest, err)
	}
	rest, err := b.VolumeSend(ctx, "av", ip)
	if err != nil || rest <= 9*time.Second || rest > 10*time.Second {
		t.Fatalf("fourth request: rest %v, %v; want just under 10s", rest, err)
	}
	ck.advance(4 * time.Second)
	if rest, err := b.VolumeSend(ctx, "av", ip); err != nil || rest <= 5*time.Second || rest > 6*time.Second {
		t.Fatalf("4 s later: rest %v, %v; want just under 6s", rest, err)
	}
	if st, err := b.ModemStats(ctx); err != nil || st.Requests != 0 {
		t.Fatalf("modem requests %d, %v; want none counted for a plain proxy", st.Requests, err)
	}
	l := leaseModem(t, b, "av", plain)
	if err := b.Release(ctx, l, Rest(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	ck.advance(4 * time.Second)
	if leasable(t, b, "av", plain) {
		t.Fatal("leased 4 s into a 5 s rest")
	}
	ck.advance(2 * time.Second)
	if !leasable(t, b, "av", plain) {
		t.Fatal("not leased after its rest")
	}
	// a fresh pool (the test Redis is flushed): rotate_after a number
	b2, _ := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval, RotateAfter: 1})
	for i := range 3 {
		if rest, err := b2.VolumeSend(ctx, "av", ip); err != nil || rest != 0 {
			t.Fatalf("rotate_after 1, request %d through a plain proxy: rest %v, %v; want sent", i+1, rest, err)
		}
	}
	if n, err := b2.rdb.Exists(ctx, b2.k.modemUse("av", ip)).Result(); err != nil || n != 0 {
		t.Fatalf("a site without rotate_after auto counted a plain proxy's IP (%d, %v)", n, err)
	}
}
