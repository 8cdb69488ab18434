package testbed

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
)

// searchURL is site's search for q, page 1; api asks Ozon's page API.
func searchURL(tb *Testbed, site, q string, api bool) string {
	switch site {
	case SiteWildberries:
		return tb.SiteURL(site) + WBSearchPath + "?" + url.Values{"query": {q}, "page": {"1"}}.Encode()
	case SiteOzon:
		path := OzonSearchPath + "?" + url.Values{"text": {q}}.Encode()
		if api {
			return tb.SiteURL(site) + OzonAPIPath + "?" + url.Values{"url": {path + "&page=1"}}.Encode()
		}
		return tb.SiteURL(site) + path
	}
	return tb.SiteURL(site) + "/rossiya?" + url.Values{"q": {q}}.Encode()
}

// softBanCase is one listing endpoint whose soft ban is checked.
type softBanCase struct {
	name, site string
	api        bool // Ozon's page API, not its HTML page
}

// softBanCases are every site's search, and Ozon's page API.
func softBanCases() []softBanCase {
	var out []softBanCase
	for _, site := range SiteNames {
		out = append(out, softBanCase{name: site, site: site})
	}
	return append(out, softBanCase{name: "ozon page api", site: SiteOzon, api: true})
}

// TestSoftBanLooksLikeNoResults: on every site (and Ozon's page API) a
// soft-banned IP's answer to a query with items has the very shape of the
// answer to a query that matches nothing (the query aside), both are
// judged Suspect with the same shape, and the log says which one the
// site meant.
func TestSoftBanLooksLikeNoResults(t *testing.T) {
	const banned, clean, other = "127.0.0.61", "127.0.0.62", "127.0.0.63"
	d := detect.New(detect.Builtin())
	for _, c := range softBanCases() {
		t.Run(c.name, func(t *testing.T) {
			site := c.site
			tb := startTB(t, Config{})
			none := tb.Catalog.NoResultQueries(site, 1)
			if len(none) != 1 {
				t.Fatalf("no no-result query on %s", site)
			}
			full := "кофе"
			if len(tb.Catalog.Matches(site, full)) == 0 {
				t.Fatalf("%q matches nothing on %s", full, site)
			}
			tb.SoftBan(site, banned, 0)
			empty := get(t, clientFrom(t, clean, false), searchURL(tb, site, none[0], c.api))
			soft := get(t, clientFrom(t, banned, false), searchURL(tb, site, full, c.api))
			items := get(t, clientFrom(t, other, false), searchURL(tb, site, full, c.api))
			if soft.status != 200 || empty.status != 200 {
				t.Fatalf("status soft %d, empty %d, want 200", soft.status, empty.status)
			}
			neutral := func(b []byte, q string) string { return strings.ReplaceAll(string(b), q, "Q") }
			if diff := cmp.Diff(neutral(empty.body, none[0]), neutral(soft.body, full)); diff != "" {
				t.Errorf("soft ban differs from no results (-empty +soft):\n%s", diff)
			}
			judge := func(a answer) detect.Verdict {
				return d.Judge(site, "search", &detect.Response{Status: a.status, Body: a.body, Page: 1})
			}
			ve, vs, vi := judge(empty), judge(soft), judge(items)
			if ve.Kind != detect.Suspect || detect.Decide(vs, ve) != detect.Agreed {
				t.Errorf("no results judged %v, soft ban %v: want both suspect and agreeing", ve, vs)
			}
			if vi.Kind != detect.OK || detect.Decide(vs, vi) != detect.Contradicted {
				t.Errorf("items after a soft ban (%v) do not contradict it", vi)
			}
			var meant []Meaning
			for _, e := range tb.Log.Entries() {
				meant = append(meant, e.Meant)
			}
			if diff := cmp.Diff([]Meaning{MeantEmpty, MeantBanned, MeantItems}, meant); diff != "" {
				t.Errorf("log meanings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSoftBanEvery: automatic bans start on every Every-th request with
// items, never within Gap of the last one, never on an empty answer,
// and end after For.
func TestSoftBanEvery(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteWildberries: {SoftBan: &SoftBan{Every: 2, Gap: time.Second, For: time.Minute}}}})
	ips := []string{"127.0.0.71", "127.0.0.72", "127.0.0.73", "127.0.0.74"}
	ask := func(ip, q string) Meaning {
		get(t, clientFrom(t, ip, false), searchURL(tb, SiteWildberries, q, false))
		es := tb.Log.Entries()
		return es[len(es)-1].Meant
	}
	none := tb.Catalog.NoResultQueries(SiteWildberries, 1)[0]
	if m := ask(ips[0], none); m != MeantEmpty {
		t.Errorf("a no-result query: %s, want empty (not eligible)", m)
	}
	if m := ask(ips[0], "кофе"); m != MeantItems {
		t.Errorf("first eligible request: %s, want items", m)
	}
	if m := ask(ips[1], "кофе"); m != MeantBanned {
		t.Errorf("second eligible request: %s, want banned", m)
	}
	clock.Advance(200 * time.Millisecond)
	for _, ip := range ips[2:] { // within the gap: nobody else is banned
		if m := ask(ip, "кофе"); m != MeantItems {
			t.Errorf("%s within the gap: %s, want items", ip, m)
		}
	}
	if m := ask(ips[1], "кофе"); m != MeantBanned {
		t.Errorf("the banned IP again: %s, want banned", m)
	}
	clock.Advance(time.Minute)
	if m := ask(ips[1], "кофе"); m != MeantItems {
		t.Errorf("after For: %s, want items", m)
	}
	if diff := cmp.Diff(map[string][]string{SiteWildberries: {ips[1]}}, tb.SoftBannedIPs()); diff != "" {
		t.Errorf("soft-banned IPs (-want +got):\n%s", diff)
	}
}

// TestNoResultQueries: every site has queries that match nothing.
func TestNoResultQueries(t *testing.T) {
	c := NewCatalog(1, 3000)
	for _, site := range SiteNames {
		qs := c.NoResultQueries(site, 10)
		if len(qs) != 10 {
			t.Errorf("%s: %d no-result queries, want 10", site, len(qs))
		}
		for _, q := range qs {
			if n := len(c.Matches(site, q)); n != 0 {
				t.Errorf("%s: %q matches %d", site, q, n)
			}
		}
	}
}

// TestSecondOpinionNeverStartsABan: a request for what a soft-banned
// answer hid (a crawler's second opinion, however late it comes) is not
// the one that starts the next ban, even past Gap; another query is.
func TestSecondOpinionNeverStartsABan(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteWildberries: {SoftBan: &SoftBan{Every: 1, Gap: 100 * time.Millisecond}}}})
	ask := func(ip, q string) Meaning {
		get(t, clientFrom(t, ip, false), searchURL(tb, SiteWildberries, q, false))
		es := tb.Log.Entries()
		return es[len(es)-1].Meant
	}
	if m := ask("127.0.0.81", "кофе"); m != MeantBanned {
		t.Fatalf("first eligible request: %s, want banned (every one starts a ban)", m)
	}
	clock.Advance(5 * time.Second) // a second opinion that first cleared a challenge
	if m := ask("127.0.0.82", "кофе"); m != MeantItems {
		t.Errorf("the second opinion: %s, want items", m)
	}
	other := ""
	for _, p := range tb.Catalog.Products(SiteWildberries) {
		if w := strings.ToLower(strings.Fields(p.Title)[0]); w != "кофе" && len(tb.Catalog.Matches(SiteWildberries, w)) > 0 {
			other = w
			break
		}
	}
	if other == "" {
		t.Fatal("no other query with items")
	}
	if m := ask("127.0.0.83", other); m != MeantBanned {
		t.Errorf("another query past the gap: %s, want banned", m)
	}
}

// TestHiddenAnswersArePruned: what soft-banned answers hid is kept for
// the second opinions of the next minute, not for the whole run.
func TestHiddenAnswersArePruned(t *testing.T) {
	sb := newSoftBans(&SoftBan{Every: 1, Gap: time.Millisecond})
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 5 {
		if !sb.judge("127.0.0.1", "/q"+string(rune('a'+i)), MeantItems, t0.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("request %d was not soft-banned", i)
		}
	}
	if len(sb.hidden) != 5 {
		t.Fatalf("%d hidden answers kept; want the 5 of the last minute", len(sb.hidden))
	}
	late := t0.Add(2 * time.Minute)
	sb.judge("127.0.0.1", "/late", MeantItems, late)
	if _, ok := sb.hidden["/late"]; !ok || len(sb.hidden) != 1 {
		t.Fatalf("hidden answers %v two minutes later; want only /late", sb.hidden)
	}
}

// TestSoftBanPair: with Pair, an automatic ban soft-bans a second IP at
// the same moment: the next other IP asking for what the ban hid gets
// the empty shape too and is banned from then on (its other answers with
// items hidden as well); the IP after it gets the items.
func TestSoftBanPair(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteWildberries: {SoftBan: &SoftBan{Every: 1, Gap: time.Second, For: time.Minute, Max: 1, Pair: true}}}})
	ips := []string{"127.0.0.81", "127.0.0.82", "127.0.0.83"}
	ask := func(ip, q string) Meaning {
		get(t, clientFrom(t, ip, false), searchURL(tb, SiteWildberries, q, false))
		es := tb.Log.Entries()
		return es[len(es)-1].Meant
	}
	if m := ask(ips[0], "кофе"); m != MeantBanned {
		t.Fatalf("first eligible request: %s, want banned", m)
	}
	clock.Advance(100 * time.Millisecond)
	if m := ask(ips[1], "кофе"); m != MeantBanned {
		t.Errorf("the second opinion of another IP: %s, want banned (the pair)", m)
	}
	if !tb.SoftBanned(SiteWildberries, ips[1]) {
		t.Errorf("%s not soft-banned after its second opinion", ips[1])
	}
	if m := ask(ips[1], "чай"); m != MeantBanned {
		t.Errorf("the pair's next request with items: %s, want banned", m)
	}
	if m := ask(ips[2], "кофе"); m != MeantItems {
		t.Errorf("a third IP's second opinion: %s, want items (one pair per ban)", m)
	}
}
