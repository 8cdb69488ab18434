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

// TestGatewayLineImportsAsSlots: one gateway line becomes its sessions'
// slots, each with the template, the provider's times and a probe; its
// session URL puts the id in the username; stored and leased, a slot
// keeps what it is.
func TestGatewayLineImportsAsSlots(t *testing.T) {
	list := "# a residential gateway\n" +
		"http://brd-customer-c1-zone-res-session-{session}:" + masktest.GatewayPassword + "@gw.example.net:22225 sessions=3 ttl=5m idle=30s exit=header:x-luminati-ip\n" +
		"http://u:p@10.0.0.9:8080 exit=probe:http://echo.example/ip\n"
	ps, err := ParseReader(strings.NewReader(list), "gw.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 {
		t.Fatalf("%d proxies, want 3 slots and a plain proxy", len(ps))
	}
	ids := map[string]bool{}
	for i, p := range ps[:3] {
		gw := p.Gateway
		if gw == nil || gw.Slot != i+1 || gw.Sessions != 3 || gw.TTL != 5*time.Minute || gw.Idle != 30*time.Second ||
			p.Exit == nil || p.Exit.Header != "x-luminati-ip" || !p.LearnsExit() {
			t.Fatalf("slot %d = %+v gateway %+v exit %+v", i, p, gw, p.Exit)
		}
		ids[p.ID] = true
	}
	if len(ids) != 3 {
		t.Errorf("slot IDs %v are not distinct", ids)
	}
	u := ps[0].WithSession("ab12")
	if u.User.Username() != "brd-customer-c1-zone-res-session-ab12" || strings.Contains(ps[0].Masked(), masktest.GatewayPassword) {
		t.Errorf("session URL user %q; masked %q", u.User.Username(), ps[0].Masked())
	}
	if p := ps[3]; p.Gateway != nil || p.Exit == nil || p.Exit.ProbeURL != "http://echo.example/ip" || !p.LearnsExit() {
		t.Errorf("plain proxy told to probe: %+v exit %+v", p, p.Exit)
	}
	b := siteBroker(t)
	ctx := context.Background()
	if _, err := b.Import(ctx, ps, ImportOptions{Class: Residential}); err != nil {
		t.Fatal(err)
	}
	l, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h", Task: "t", TTL: time.Minute}, ps[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Proxy.Gateway == nil || l.Proxy.Gateway.Slot != 2 || l.Proxy.Exit.Header != "x-luminati-ip" {
		t.Errorf("leased slot lost its gateway: %+v", l.Proxy)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Gateways) != 1 || st.Gateways[0].Slots != 3 || st.Gateways[0].Leased != 1 || st.Gateways[0].Exit != "header:x-luminati-ip" ||
		strings.Contains(st.Gateways[0].Masked, masktest.GatewayPassword) || st.Sites["ozon"].Exits == nil {
		t.Errorf("stats: gateways %+v, ozon exits %+v", st.Gateways, st.Sites["ozon"].Exits)
	}
}

// TestGatewayLineErrors: a bad gateway line names its line and what is
// wrong, never the password.
func TestGatewayLineErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"http://u-{session}:pw@gw:1 sessions=0", "option sessions: want 1 to 100000"},
		{"http://u-{session}:pw@gw:1 sessions=many", "option sessions"},
		{"http://u-{session}:pw@gw:1 ttl=-5m", "option ttl: want a positive duration"},
		{"http://u-{session}:pw@gw:1 exit=telepathy", "option exit: want header:NAME, probe or probe:URL"},
		{"http://u-{session}:pw@gw:1 sesions=5", `unknown option "sesions" (did you mean sessions?)`},
		{"http://u-{session}:pw@gw:1 colour=red", `unknown option "colour" (want sessions=N, ttl=D`},
		{"http://u-{session}:pw@gw:1 ttl=5m sessions=2 ttl=6m", "option ttl given twice"},
		{"http://u-{session}:pw@gw:1 rotating rotating", "option rotating given twice"},
		{"http://h:1 change=http://x/c/KEY1 change=http://x/c/KEY2", "option change given twice"},
		{"http://u-{session}:pw@gw:1 sessions", `option sessions: want 1 to 100000, got ""`},
		{"http://u:pw@gw:1 sessions=5", "a gateway needs {session} in its username"},
		{"http://u-{session}:pw@gw:1 rotating", "a rotating gateway has no {session}"},
	} {
		_, err := ParseReader(strings.NewReader("\n"+tc.line+"\n"), "list.txt")
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want list.txt:2: …%s", tc.line, err, tc.want)
		}
	}
}

// TestRotatingGatewayRefusedForPacedSites: a gateway without sticky
// sessions cannot keep a min_interval; its import says so and writes
// nothing unless allowed, and is accepted for sites without one.
func TestRotatingGatewayRefusedForPacedSites(t *testing.T) {
	ctx := context.Background()
	ps, err := ParseReader(strings.NewReader("http://rot:pw@gw.example:7000 rotating sessions=2\n"), "rot.txt")
	if err != nil {
		t.Fatal(err)
	}
	paced := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{
		Sites: map[string]SiteConfig{"wildberries": {MinInterval: 200 * time.Millisecond}, "ozon": noGap}})
	_, err = paced.Import(ctx, ps, ImportOptions{})
	var re *RotatingError
	if !errors.As(err, &re) || len(re.Sites) != 1 || re.Sites[0] != "wildberries" || strings.Contains(err.Error(), "pw") ||
		!strings.HasPrefix(err.Error(), "rot.txt:1: http://rot:***@gw.example:7000 is a rotating gateway") {
		t.Fatalf("rotating gateway on a paced site: %v, want rot.txt:1 and a RotatingError naming wildberries", err)
	}
	if got := listPool(t, paced); len(got) != 0 {
		t.Fatalf("a refused import wrote %d proxies", len(got))
	}
	if _, err := paced.Import(ctx, ps, ImportOptions{Sites: []string{"ozon"}}); err != nil {
		t.Errorf("for a site without min_interval: %v", err)
	}
	if _, err := paced.Import(ctx, ps, ImportOptions{AllowRotating: true, Update: true}); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

// TestYAMLListReadsGatewaysAndLines: a YAML proxy list holds lines and
// gateways as mappings, the same proxies as the lines they stand for; a
// bad item or a typo names its file and line.
func TestYAMLListReadsGatewaysAndLines(t *testing.T) {
	doc := "proxies:\n" +
		"  - http://u:p@10.0.0.9:8080\n" +
		"  - url: http://brd-customer-c1-zone-res-session-{session}:" + masktest.GatewayPassword + "@gw.example.net:22225\n" +
		"    sessions: 2\n" +
		"    idle: 30s\n" +
		"    exit: header:x-luminati-ip\n"
	got, err := ParseYAML(strings.NewReader(doc), "pool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseReader(strings.NewReader("http://u:p@10.0.0.9:8080\n"+
		"http://brd-customer-c1-zone-res-session-{session}:"+masktest.GatewayPassword+"@gw.example.net:22225 sessions=2 idle=30s exit=header:x-luminati-ip\n"), "pool.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || fmt.Sprint(got) != fmt.Sprint(want) || got[2].Gateway.Idle != 30*time.Second || got[1].ID != want[1].ID {
		t.Errorf("YAML list = %v, want %v", got, want)
	}
	for _, tc := range []struct{ doc, want string }{
		{"proxies:\n  - url: http://u-{session}:pw@gw:1\n    sesions: 5\n", `pool.yaml:3: unknown field "sesions" in a proxy (did you mean sessions?)`},
		{"proxies:\n  - http://u:pw@gw:1\n  - url: http://u-{session}:pw@gw:1\n    ttl: soon\n", "pool.yaml:4: option ttl: want a positive duration"},
		{"proxeis:\n  - http://u:pw@gw:1\n", `pool.yaml:1: unknown field "proxeis" at the top level (did you mean proxies?)`},
		{"proxies:\n  - url: http://u-{session}:pw@gw:1\n    ttl: 5m\n    idle: 5s\n    ttl: 6m\n", "pool.yaml:5: ttl: duplicate key (first at line 3)"},
		{"proxies:\n  - url: http://u-{session}:pw@gw:1\n    sessions: 5\n   ttl: 10m\n", "pool.yaml:4: yaml: did not find expected '-' indicator"},
		{"proxies:\n  - url: http://u-{session}:pw@gw:1\n    rotating: true\n", "pool.yaml:2: a rotating gateway has no {session}"},
		{"proxies:\n  - http://u-{session}:pw@gw:1 sessions=2 sessions=3\n", "pool.yaml:2: option sessions given twice (first on line 2)"},
	} {
		_, err := ParseYAML(strings.NewReader(tc.doc), "pool.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: %v, want %s…", tc.doc, err, tc.want)
		}
	}
}
