package proxies

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	gatewayBefore = "http://u-{session}:gw-pw@127.0.0.9:22225 sessions=5 ttl=10m idle=60s exit=header:x-ip\n"
	modemBefore   = "http://mob:mob-pw@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/KEY-one/m0 change_every=60s change_settle=10s\n"
	gatewayAfter  = "http://u-{session}:gw-pw@127.0.0.9:22225 sessions=2 ttl=20m idle=30s exit=probe\n"
	modemAfter    = "http://mob:mob-pw@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/KEY-two/m0 change_method=POST change_every=90s change_settle=5s\n"
)

func parseList(t *testing.T, list, name string) []Proxy {
	t.Helper()
	ps, err := ParseReader(strings.NewReader(list), name)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// stored is ps as the pool stores them, imported as class c: sorted by
// ID, without where they were read.
func stored(ps []Proxy, c Class) []Proxy {
	out := append([]Proxy(nil), ps...)
	for i := range out {
		out[i].At, out[i].Class = "", c
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// TestReimportGatewayAndModemOptions: re-importing a gateway and a modem
// with each of their options changed, without Update, changes nothing
// and says what would change (the change link's key masked, each entry
// at its file and line); with Update the pool holds exactly the new
// options, the gateway's slots beyond its new sessions gone in the same
// write and a live lease on one of them ended (its holder's extend and
// release are refused as stale, the slot cannot be leased again) while a
// lease on a kept slot lives on. Raising the sessions adds slots; the
// same list again changes nothing.
func TestReimportGatewayAndModemOptions(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	before := parseList(t, gatewayBefore+modemBefore, "old.txt")
	if r, err := b.ImportReport(ctx, before, ImportOptions{Class: Mobile}); err != nil || r.Entries.String() != "1 gateway (5 sessions) and 1 modem" || r.NewEntries != 2 {
		t.Fatalf("first import: %+v, %v", r, err)
	}
	req := LeaseRequest{Site: "ozon", Holder: "h", Task: "t", TTL: time.Minute}
	removed, err := b.LeaseProxy(ctx, req, before[4].ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h", Task: "t1", TTL: time.Minute}, before[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	pool := listPool(t, b)
	after := parseList(t, gatewayAfter+modemAfter, "new.txt")
	_, err = b.ImportReport(ctx, after, ImportOptions{Class: Mobile})
	want := "1 gateway and 1 modem already in the pool would change: " +
		"gateway http://u-{session}:***@127.0.0.9:22225 (new.txt:1): sessions 5 → 2 (3 slots removed), ttl 10m → 20m, idle 1m → 30s, exit header:x-ip → probe; " +
		"modem http://mob:***@127.0.0.7:3128 (new.txt:2): change " + before[5].Modem.Masked() + " → another that prints the same (masked), " +
		"change_method GET → POST, change_every 1m → 1m30s, change_settle 10s → 5s"
	var ce *ChangeError
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("re-import without Update:\n got %v\nwant %s", err, want)
	}
	if strings.Contains(err.Error(), "KEY-") || strings.Contains(err.Error(), "-pw") {
		t.Fatalf("the refusal shows a secret: %v", err)
	}
	if d := cmp.Diff(pool, listPool(t, b)); d != "" {
		t.Fatalf("a refused re-import changed the pool (-before +after):\n%s", d)
	}

	r, err := b.ImportReport(ctx, after, ImportOptions{Class: Mobile, Update: true})
	if err != nil || r.Imported != 3 || r.New != 0 || r.Removed != 3 || len(r.Changed) != 2 || r.NewEntries != 0 {
		t.Fatalf("re-import with Update: %+v, %v; want 3 imported, 3 slots removed, 2 changed", r, err)
	}
	if d := cmp.Diff(stored(after, Mobile), listPool(t, b)); d != "" {
		t.Fatalf("the pool after the update is not exactly the new list (-want +got):\n%s", d)
	}
	if _, err := b.Extend(ctx, removed, time.Minute); !errors.Is(err, ErrStaleLease) {
		t.Errorf("extend of a lease on a removed slot: %v, want ErrStaleLease", err)
	}
	if err := b.Release(ctx, removed, OK(time.Millisecond)); !errors.Is(err, ErrStaleLease) {
		t.Errorf("release of a lease on a removed slot: %v, want ErrStaleLease", err)
	}
	if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h2", Task: "t2", TTL: time.Minute}, before[4].ID); !errors.Is(err, ErrUnknownProxy) {
		t.Errorf("lease of a removed slot: %v, want ErrUnknownProxy", err)
	}
	if _, err := b.Extend(ctx, kept, time.Minute); err != nil {
		t.Errorf("extend of a lease on a kept slot: %v", err)
	}

	more := parseList(t, strings.Replace(gatewayAfter, "sessions=2", "sessions=4", 1), "more.txt")
	r, err = b.ImportReport(ctx, more, ImportOptions{Class: Mobile, Update: true})
	if err != nil || r.New != 2 || SummarizeChanges(r.Changed) != "gateway http://u-{session}:***@127.0.0.9:22225 (more.txt:1): sessions 2 → 4 (2 slots added)" {
		t.Fatalf("sessions 2 → 4: %+v, %v", r, err)
	}
	if got := len(listPool(t, b)); got != 5 {
		t.Fatalf("%d proxies after sessions 2 → 4, want 4 slots and the modem", got)
	}
	r, err = b.ImportReport(ctx, more, ImportOptions{Class: Mobile})
	if err != nil || len(r.Changed) != 0 || r.NewEntries != 0 || r.Removed != 0 {
		t.Fatalf("the same list again: %+v, %v; want nothing changed", r, err)
	}
}

// TestReimportRepairsMixedSlots: a gateway whose slots in the pool
// disagree (slots 1-2 with other options than 3-5, as an earlier crawlq
// left them) is a change, and the update makes every slot the line's.
func TestReimportRepairsMixedSlots(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	old := parseList(t, gatewayBefore, "gw.txt")
	mixed := parseList(t, strings.Replace(gatewayBefore, "ttl=10m", "ttl=20m", 1), "gw.txt")
	if _, err := b.Import(ctx, append(mixed[:2:2], old[2:]...), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Import(ctx, mixed, ImportOptions{})
	if !errors.Is(err, ErrWouldChange) || !strings.Contains(err.Error(), "ttl 10m → 20m") {
		t.Fatalf("re-import over mixed slots: %v, want the ttl change named", err)
	}
	if _, err := b.Import(ctx, mixed, ImportOptions{Update: true}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(stored(mixed, Datacenter), listPool(t, b), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("slots after the update (-want +got):\n%s", d)
	}
}

// TestRemoveEntries: a gateway's ID removes all its slots, a slot's ID
// that slot alone; an ID the pool does not hold refuses the whole
// removal and removes nothing. The pool lists a gateway once, by its ID,
// with its slots and options as the line gave them.
func TestRemoveEntries(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	ps := parseList(t, gatewayBefore+modemBefore+"http://u:p@127.0.0.5:8080\n", "pool.txt")
	if _, err := b.Import(ctx, ps, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	es, err := b.ListEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gw := ps[0].GatewayID()
	var got []string
	for _, e := range es {
		got = append(got, e.Kind()+" "+e.ID+" "+strings.Join(e.Proxy.Options(), " "))
	}
	want := []string{"gateway " + gw + " sessions=5 ttl=10m idle=1m exit=header:x-ip",
		"modem " + ps[5].ID + " exit=probe change=" + ps[5].Modem.Masked() + " change_method=GET change_every=1m change_settle=10s",
		"proxy " + ps[6].ID + " "}
	sort.Strings(want)
	sort.Strings(got)
	if d := cmp.Diff(want, got); d != "" || len(es[0].Slots)+len(es[1].Slots)+len(es[2].Slots) != 5 {
		t.Fatalf("entries (-want +got):\n%s", d)
	}
	before := listPool(t, b)
	_, err = b.RemoveEntries(ctx, gw, "nope")
	var nip *NotInPoolError
	if !errors.As(err, &nip) || !cmp.Equal(nip.IDs, []string{"nope"}) {
		t.Fatalf("remove with an unknown ID: %v, want NotInPoolError naming it", err)
	}
	if d := cmp.Diff(before, listPool(t, b)); d != "" {
		t.Fatalf("a refused removal changed the pool:\n%s", d)
	}
	tally, err := b.RemoveEntries(ctx, ps[4].ID)
	if err != nil || tally.String() != "1 proxy" || len(listPool(t, b)) != 6 {
		t.Fatalf("remove one slot: %v, %v", tally, err)
	}
	tally, err = b.RemoveEntries(ctx, gw, ps[6].ID, gw)
	if err != nil || tally.String() != "1 gateway (4 sessions) and 1 proxy" {
		t.Fatalf("remove the gateway and a proxy: %v, %v", tally, err)
	}
	if left := listPool(t, b); len(left) != 1 || left[0].ID != ps[5].ID {
		t.Fatalf("left in the pool: %v, want the modem alone", left)
	}
}
