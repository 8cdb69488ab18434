package proxies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
)

const modemLine = "http://u:" + masktest.ProxyPassword + "@127.0.0.9:3128 change=http://127.0.0.1:9999/changeip/" + masktest.ChangeKey + "/m1 change_every=60s change_settle=10s"

// TestModemLineParsesAndMasksItsKey: a modem line carries its change
// link; the link's key never shows in what is printed, nor in an error.
func TestModemLineParsesAndMasksItsKey(t *testing.T) {
	ps, err := ParseReader(strings.NewReader(modemLine+" change_method=post\n"), "modems.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if p.Modem == nil || p.Modem.Every != time.Minute || p.Modem.Settle != 10*time.Second || p.Modem.Method != "POST" {
		t.Fatalf("modem = %#v", p.Modem)
	}
	if !p.LearnsExit() || !p.Rotates() {
		t.Fatal("a modem learns its exit IP and rotates")
	}
	for _, s := range []string{p.Modem.Masked(), fmt.Sprint(p.Modem), fmt.Sprintf("%#v", p), fmt.Sprintf("%+v", *p.Modem)} {
		if strings.Contains(s, masktest.ChangeKey) || strings.Contains(s, masktest.ProxyPassword) {
			t.Fatalf("printed %q leaks a secret", s)
		}
	}
	if got := p.Modem.Masked(); got != "http://127.0.0.1:9999/changeip/***/***" {
		t.Fatalf("masked = %q", got)
	}
	bad := []struct{ line, want string }{
		{"http://h:1 change_every=60s", "need change=URL"},
		{"http://h:1 change=ftp://x/changeip/" + masktest.ChangeKey + "/a", "want an http(s)"},
		{"http://h:1 change=http://x/c/" + masktest.ChangeKey + " change_every=0s", "change_every"},
		{"http://u-session-{session}:p@h:1 change=http://x/c/" + masktest.ChangeKey, "not a gateway"},
		{"http://h:1 change=http://x/c/" + masktest.ChangeKey + " change_method=PUT", "GET or POST"},
		{"http://h:1 change_colour=red", "unknown option"},
	}
	for _, c := range bad {
		_, err := ParseReader(strings.NewReader("\n"+c.line+"\n"), "modems.txt")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "modems.txt:2") {
			t.Errorf("%s: %v, want modems.txt:2 and %q", c.line, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), masktest.ChangeKey) {
			t.Errorf("%s: the error leaks the key: %v", c.line, err)
		}
	}
}

// TestYAMLModem: a modem as a YAML mapping is the same modem.
func TestYAMLModem(t *testing.T) {
	doc := "proxies:\n  - url: http://u:" + masktest.ProxyPassword + "@127.0.0.9:3128\n    change: http://127.0.0.1:9999/changeip/" + masktest.ChangeKey + "/m1\n    change_every: 60s\n    change_settle: 10s\n"
	ys, err := ParseYAML(strings.NewReader(doc), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := ParseReader(strings.NewReader(modemLine), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	if ys[0].ID != ls[0].ID || *ys[0].Modem != *ls[0].Modem {
		t.Fatalf("yaml %#v != line %#v", ys[0].Modem, ls[0].Modem)
	}
}

// modemPool is a broker with one modem and one plain proxy, serving "av"
// and "oz".
func modemPool(t *testing.T, ck *clock, siteCfg SiteConfig) (*RedisBroker, Proxy) {
	t.Helper()
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{
		Pool:  fmt.Sprintf("modem-%s-%d", t.Name(), time.Now().UnixNano()),
		Sites: map[string]SiteConfig{"av": siteCfg, "oz": {MinInterval: NoMinInterval}},
	}))
	ps := importList(t, b, modemLine+"\nhttp://127.0.0.2:3128\n", ImportOptions{})
	return b, ps[0]
}

// leaseModem leases proxies on site until it gets the modem.
func leaseModem(t *testing.T, b *RedisBroker, site string, m Proxy) *Lease {
	t.Helper()
	for i := 0; i < 3; i++ {
		l, err := b.LeaseProxy(context.Background(), LeaseRequest{Site: site, Class: Datacenter, Holder: "w", Task: "t-" + site, TTL: time.Minute}, m.ID)
		if err == nil {
			return l
		}
	}
	t.Fatalf("cannot lease the modem on %s", site)
	return nil
}

// leasable says whether a lease on site can get the modem now.
func leasable(t *testing.T, b *RedisBroker, site string, m Proxy) bool {
	t.Helper()
	ctx := context.Background()
	var got []*Lease
	defer func() {
		for _, l := range got {
			_ = b.Release(ctx, l, Neutral())
		}
	}()
	for {
		l, err := b.Lease(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: "x", Task: "probe", TTL: time.Minute})
		if err != nil {
			return false
		}
		got = append(got, l)
		if l.Proxy.ID == m.ID {
			return true
		}
	}
}

// TestRotationKeepsTheModemFromEveryLease: from BeginRotation to its end
// no site leases the modem, by choice or by name; the plain proxy is
// unaffected; after a done rotation the modem is leased at once.
func TestRotationKeepsTheModemFromEveryLease(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: time.Second})
	_ = leaseModem(t, b, "oz", m) // both sites' sets exist
	if err := b.Release(ctx, leaseModem(t, b, "oz", m), Neutral()); err != nil && !errors.Is(err, ErrStaleLease) {
		t.Fatal(err)
	}
	l := leaseModem(t, b, "av", m)
	r, err := b.BeginRotation(ctx, l, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"av", "oz"} {
		if leasable(t, b, site, m) {
			t.Fatalf("%s leased the modem while it rotates", site)
		}
		_, err := b.LeaseProxy(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: "w", Task: "other", TTL: time.Minute}, m.ID)
		var nr *NotReadyError
		if !errors.As(err, &nr) {
			t.Fatalf("%s: leasing the rotating modem by name: %v, want not ready", site, err)
		}
	}
	if err := b.EndRotation(ctx, r, RotationResult{IP: "10.1.1.1", Took: time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"av", "oz"} {
		if !leasable(t, b, site, m) {
			t.Fatalf("%s cannot lease the modem after its rotation", site)
		}
	}
	if _, err := b.BeginRotation(ctx, l, time.Minute); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("a second rotation from the same lease: %v, want ErrStaleLease", err)
	}
}

// TestOneRotationAtATime: a second lease's rotation while one is live is
// refused (ErrRotationBusy); a dead rotator's mark frees the modem after
// its TTL, and a new rotation can begin.
func TestOneRotationAtATime(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval})
	_ = leaseModem(t, b, "oz", m)
	l := leaseModem(t, b, "av", m)
	ck.advance(2 * time.Minute) // the oz lease expires
	if _, err := b.BeginRotation(ctx, l, time.Minute); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("rotation from an expired lease: %v", err)
	}
	l = leaseModem(t, b, "av", m)
	other := leaseModem(t, b, "oz", m)
	if _, err := b.BeginRotation(ctx, l, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := b.BeginRotation(ctx, other, 30*time.Second); !errors.Is(err, ErrRotationBusy) {
		t.Fatalf("second rotation: %v, want ErrRotationBusy", err)
	}
	ck.advance(31 * time.Second) // the rotator died: nobody pushed its mark
	if !leasable(t, b, "av", m) {
		t.Fatal("a dead rotator's modem is not leased after its TTL")
	}
}

// TestChangeWaitsForTheProviderAndTheModemsSessions: the change link may
// be called only the provider's interval and ChangeMargin after the last
// accepted change, cluster-wide, and only once no session holds the
// modem on any site.
func TestChangeWaitsForTheProviderAndTheModemsSessions(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval})
	oz := leaseModem(t, b, "oz", m)
	r, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait <= 0 || wait > time.Minute+time.Second {
		t.Fatalf("change while oz holds the modem: wait %s, %v", wait, err)
	}
	if err := b.Release(ctx, oz, Neutral()); err != nil {
		t.Fatal(err)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("first change: wait %s, %v", wait, err)
	}
	if err := b.EndRotation(ctx, r, RotationResult{IP: "10.1.1.2", Took: time.Second}); err != nil {
		t.Fatal(err)
	}
	ck.advance(20 * time.Second)
	r, err = b.BeginRotation(ctx, leaseModem(t, b, "av", m), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wait, err := b.MayChange(ctx, r)
	if err != nil || wait < 40*time.Second || wait > 41*time.Second {
		t.Fatalf("change 20 s after the last (provider: 60 s, margin 1 s): wait %s, %v", wait, err)
	}
	if d := r.NotBefore.Sub(r.Began); d < 40*time.Second || d > 41*time.Second {
		t.Errorf("not before %s after the rotation began, want 40–41 s", d)
	}
	ck.advance(wait)
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("change 61 s after the last: wait %s, %v", wait, err)
	}
}

// TestChangeCountsFromTheLinksAnswer: the provider counts its interval
// from when it took the call, which a slow link makes later than the
// permission; the change recorded when the link answered is what the
// next change waits from. An older record never replaces a newer one.
func TestChangeCountsFromTheLinksAnswer(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval})
	r, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("first change: wait %s, %v", wait, err)
	}
	ck.advance(3 * time.Second) // the link took 3 s to answer
	if err := b.Changed(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := b.EndRotation(ctx, r, RotationResult{IP: "10.1.1.2", Took: 4 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ck.advance(58 * time.Second) // 61 s after the permission, 58 s after the answer
	r, err = b.BeginRotation(ctx, leaseModem(t, b, "av", m), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wait, err := b.MayChange(ctx, r)
	if err != nil || wait < 2*time.Second || wait > 3100*time.Millisecond {
		t.Fatalf("change 58 s after the link's answer (provider: 60 s, margin 1 s): wait %s, %v", wait, err)
	}
	ck.advance(wait)
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("change 61 s after the answer: wait %s, %v", wait, err)
	}
	ck.advance(-time.Minute) // a late answer recorded with an earlier clock
	if err := b.Changed(ctx, r); err != nil {
		t.Fatal(err)
	}
	ck.advance(time.Minute)
	if wait, err := b.MayChange(ctx, r); err != nil || wait < 59*time.Second {
		t.Fatalf("just after a change, with an older record sent late: wait %s, %v (the newer was replaced)", wait, err)
	}
}

// TestFailedRotationQuarantinesOnItsSite: a rotation with no new IP
// quarantines the modem on the site that banned it, as a ban would; the
// other site leases it.
func TestFailedRotationQuarantinesOnItsSite(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval, QuarantineBase: 300 * time.Second, QuarantineFloor: 300 * time.Second})
	_ = b.Release(ctx, leaseModem(t, b, "oz", m), Neutral())
	r, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EndRotation(ctx, r, RotationResult{Took: 40 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if leasable(t, b, "av", m) || !leasable(t, b, "oz", m) {
		t.Fatal("failed rotation: want quarantined on av only")
	}
	ck.advance(301 * time.Second)
	if !leasable(t, b, "av", m) {
		t.Fatal("the quarantine did not end")
	}
	st, err := b.ModemStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Modems != 1 || st.Failed != 1 || st.P50 != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRotateAfterCountsPerIPAndSite: with rotate_after 3 the fourth
// request from one IP to the site asks for a rotation, through whichever
// modem the IP is on; a new IP starts again; another site is not
// counted; a rotating modem sends nothing.
func TestRotateAfterCountsPerIPAndSite(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval, RotateAfter: 3})
	send := func(site, ip string) ModemAnswer {
		a, err := b.ModemSend(ctx, m, site, ip)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for i := 0; i < 3; i++ {
		if a := send("av", "10.0.0.1"); a != ModemSendOK {
			t.Fatalf("request %d: %v", i+1, a)
		}
	}
	if a := send("av", "10.0.0.1"); a != ModemRotateFirst {
		t.Fatalf("fourth request: %v, want rotate first", a)
	}
	other := m
	other.ID = "another-modem"
	if a, err := b.ModemSend(ctx, other, "av", "10.0.0.1"); err != nil || a != ModemRotateFirst {
		t.Fatalf("another modem handed the same IP: %v, %v; want rotate first (the site counts by IP)", a, err)
	}
	if a := send("oz", "10.0.0.1"); a != ModemSendOK {
		t.Fatalf("oz has no rotate_after: %v", a)
	}
	if a := send("av", "10.0.0.2"); a != ModemSendOK {
		t.Fatalf("a new IP: %v", a)
	}
	if _, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), time.Minute); err != nil {
		t.Fatal(err)
	}
	if a := send("oz", "10.0.0.2"); a != ModemRotating {
		t.Fatalf("while rotating: %v", a)
	}
	st, err := b.ModemStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rotating != 1 || st.Requests != 5 {
		t.Fatalf("stats %+v, want 1 rotating and 5 requests", st)
	}
}

// TestWaitersLookAgainWhileAModemRotates: with nothing leased but a
// modem rotating, a lease that finds nothing ready says some proxy may
// come back early (Leased), so LeaseWait polls instead of sleeping to the
// rotation's deadline (the lease TTL) while the rotation ends in seconds.
func TestWaitersLookAgainWhileAModemRotates(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: time.Second})
	l := leaseModem(t, b, "av", m)
	plain, err := b.Lease(ctx, LeaseRequest{Site: "av", Class: Datacenter, Holder: "w", Task: "plain", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.BeginRotation(ctx, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, plain, Neutral()); err != nil {
		t.Fatal(err)
	}
	_, err = b.Lease(ctx, LeaseRequest{Site: "av", Class: Datacenter, Holder: "w", Task: "waiter", TTL: time.Minute})
	var nr *NotReadyError
	if !errors.As(err, &nr) || !nr.Leased {
		t.Fatalf("lease while the only other proxy cools and the modem rotates: %v (%+v), want not ready with Leased", err, nr)
	}
}

// TestExtendRotationPushesEveryKnownSet: extending a rotation pushes the
// modem's ready-at on every site's set to the new deadline, not only on
// the site it began from, and keeps it from every lease past the first
// deadline; a rotation no longer live is not extended.
func TestExtendRotationPushesEveryKnownSet(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval})
	if err := b.Release(ctx, leaseModem(t, b, "oz", m), Neutral()); err != nil {
		t.Fatal(err)
	}
	r, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ck.advance(50 * time.Second)
	if err := b.ExtendRotation(ctx, r, time.Minute); err != nil {
		t.Fatal(err)
	}
	deadline := r.Began.Add(50*time.Second + time.Minute).UnixMilli()
	for _, site := range []string{"av", "oz"} {
		at, err := b.rdb.ZScore(ctx, b.k.ready(site, Datacenter), m.ID).Result()
		if err != nil || int64(at) < deadline {
			t.Fatalf("%s: the modem is ready at %v (%v), want from the new deadline %d on", site, at, err, deadline)
		}
	}
	ck.advance(20 * time.Second) // past the first deadline, before the new one
	for _, site := range []string{"av", "oz"} {
		if leasable(t, b, site, m) {
			t.Fatalf("%s leased the modem before its extended deadline", site)
		}
	}
	ck.advance(time.Minute) // the rotator died: nobody pushed again
	if err := b.ExtendRotation(ctx, r, time.Minute); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("extend a rotation past its deadline: %v, want ErrStaleLease", err)
	}
}

// TestRefusalTeachesTheProvidersInterval: a modem configured at 60 s
// whose provider refuses the call 61 s after the last change with
// Retry-After 30 teaches the provider's interval (91 s, at most the
// refusal's latency more), for every modem of the provider; the refused
// call changed nothing, so the next change waits from the last accepted
// one: 91 s + the margin. A refusal without Retry-After teaches nothing,
// and a pinned interval is kept.
func TestRefusalTeachesTheProvidersInterval(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b, m := modemPool(t, ck, SiteConfig{MinInterval: NoMinInterval})
	first := rotation(t, b, m)
	if wait, err := b.MayChange(ctx, first); err != nil || wait != 0 {
		t.Fatalf("first change: wait %s, %v", wait, err)
	}
	endRotation(t, b, first)
	ck.advance(61 * time.Second)
	r := rotation(t, b, m)
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("change 61 s after: wait %s, %v", wait, err)
	}
	every, learned, err := b.Refused(ctx, r, Refusal{RetryAfter: 30 * time.Second, Given: true})
	if err != nil || !learned || every < 91*time.Second || every > 92*time.Second {
		t.Fatalf("refused 61 s after the change, Retry-After 30 s: learned %v %s, %v; want 91 s", learned, every, err)
	}
	if d := r.NotBefore.Sub(ms(first.permitted)); d != every+ChangeMargin {
		t.Errorf("not before the last change + %s, want + %s", d, every+ChangeMargin)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait < 30900*time.Millisecond || wait > 32*time.Second {
		t.Fatalf("after the refusal: wait %s, %v; want the rest of 91 s + the margin from the last change (31 s)", wait, err)
	}
	l, err := b.Limit(ctx, ChangeLimitName("127.0.0.1:9999"))
	if err != nil || l.Value != every.Milliseconds() || l.Min != time.Minute.Milliseconds() || l.Max != MaxChangeEvery.Milliseconds() ||
		l.Unit != "ms" || l.Pinned || !strings.Contains(l.Reason, "Retry-After 30s") {
		t.Fatalf("learned limit %+v, %v", l, err)
	}
	ck.advance(32 * time.Second)
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("at the learned interval: wait %s, %v", wait, err)
	}
	if e, learned, err := b.Refused(ctx, r, Refusal{RetryAfter: 5 * time.Second}); err != nil || learned || e != every {
		t.Fatalf("refusal without Retry-After: learned %v %s, %v; want the %s kept", learned, e, err, every)
	}
	ck.advance(-32 * time.Second)
	if err := b.PinLimit(ctx, ChangeLimitName(m.Modem.Provider()), 2*time.Minute.Milliseconds()); err != nil {
		t.Fatal(err)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait < 59*time.Second || wait > 61*time.Second {
		t.Fatalf("pinned at 120 s, 61 s after the change: wait %s, %v; want 60 s", wait, err)
	}
}

// rotation begins a rotation of modem m from a lease on "av".
func rotation(t *testing.T, b *RedisBroker, m Proxy) *Rotation {
	t.Helper()
	r, err := b.BeginRotation(context.Background(), leaseModem(t, b, "av", m), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// endRotation ends r with a new IP.
func endRotation(t *testing.T, b *RedisBroker, r *Rotation) {
	t.Helper()
	if err := b.EndRotation(context.Background(), r, RotationResult{IP: "10.1.1.9", Took: time.Second}); err != nil {
		t.Fatal(err)
	}
}
