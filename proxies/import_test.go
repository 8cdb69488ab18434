package proxies

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
)

// siteBroker is a broker on a flushed DB whose configuration knows the
// built-in sites.
func siteBroker(t *testing.T) *RedisBroker {
	t.Helper()
	sites := map[string]SiteConfig{"avito": noGap, "ozon": noGap, "wildberries": noGap}
	return NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Sites: sites, Default: noGap})
}

func listPool(t *testing.T, b *RedisBroker) []Proxy {
	t.Helper()
	ps, err := b.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestImportRefusesUnknownSite: --sites naming a site the configuration
// does not know refuses the file with one line naming it and the known
// sites; the pool, leased on already, stays as it was. A known site and a
// page job's host are accepted.
func TestImportRefusesUnknownSite(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	ps := testProxies(t, 4)
	if _, err := b.Import(ctx, ps[:2], ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wildberries", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	before := listPool(t, b)
	_, err := b.Import(ctx, ps, ImportOptions{Sites: []string{"ozon", "amazon"}, Update: true})
	var us *UnknownSiteError
	if !errors.As(err, &us) || us.Site != "amazon" || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), `"amazon"`) || !strings.Contains(err.Error(), "known: avito, ozon, wildberries") {
		t.Fatalf("import --sites ozon,amazon: err = %v, want one line naming amazon and the known sites", err)
	}
	if d := cmp.Diff(before, listPool(t, b)); d != "" {
		t.Fatalf("a refused import changed the pool (-before +after):\n%s", d)
	}
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wildberries", Class: Datacenter, Holder: "h", Task: "t2", TTL: time.Minute}); err != nil {
		t.Fatalf("the pool no longer serves wildberries after a refused import: %v", err)
	}
	if _, err := b.Import(ctx, ps[2:], ImportOptions{Sites: []string{"ozon", "shop.example.com"}}); err != nil {
		t.Fatalf("import of new proxies for a known site and a page host: %v", err)
	}
}

// TestReimportChangesOnlyWithUpdate: a file that would move proxies of
// the pool to other sites or another class is refused, saying what would
// change, and nothing of it is written (not even its new proxies); the
// same file with Update changes them and says so; an identical import
// changes nothing and is not refused.
func TestReimportChangesOnlyWithUpdate(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	ps := testProxies(t, 4)
	if _, err := b.Import(ctx, ps[:3], ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := listPool(t, b)
	tests := []struct {
		name string
		opt  ImportOptions
		want string
	}{
		{name: "other sites", opt: ImportOptions{Sites: []string{"ozon"}},
			want: "3 proxies already in the pool would change: 3 proxies from datacenter on every site to datacenter on ozon"},
		{name: "another class", opt: ImportOptions{Class: Residential},
			want: "3 proxies already in the pool would change: 3 proxies from datacenter on every site to residential on every site"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Import(ctx, ps, tc.opt)
			var ce *ChangeError
			if !errors.As(err, &ce) || !errors.Is(err, ErrWouldChange) || len(ce.Changes) != 3 || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if d := cmp.Diff(before, listPool(t, b)); d != "" {
				t.Fatalf("a refused import changed the pool (-before +after):\n%s", d)
			}
		})
	}
	r, err := b.ImportReport(ctx, ps, ImportOptions{Sites: []string{"ozon"}, Update: true})
	if err != nil || r.Imported != 4 || r.New != 1 || r.NewEntries != 1 || len(r.Changed) != 3 ||
		SummarizeChanges(r.Changed) != "3 proxies from datacenter on every site to datacenter on ozon" {
		t.Fatalf("import with Update: %+v, %v; want 4 imported, 1 new, 3 changed to ozon", r, err)
	}
	for _, p := range listPool(t, b) {
		if !cmp.Equal(p.Sites, []string{"ozon"}) {
			t.Errorf("proxy %s serves %v after the update, want ozon", p.ID, p.Sites)
		}
	}
	r, err = b.ImportReport(ctx, ps, ImportOptions{Sites: []string{"ozon"}})
	if err != nil || r.Imported != 4 || r.New != 0 || len(r.Changed) != 0 {
		t.Fatalf("identical import: %+v, %v; want 4 imported, none new or changed", r, err)
	}
}

// TestImportWritesOnlyWhatItChecked: an import planned on a pool that
// another import changed before the write is not written over it: the
// script finds the spec it read gone and writes nothing.
func TestImportWritesOnlyWhatItChecked(t *testing.T) {
	ctx := context.Background()
	b := siteBroker(t)
	ps := testProxies(t, 2)
	if _, err := b.Import(ctx, ps[:1], ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	ready, err := b.prepareAll(ps, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := b.planImport(ctx, ready, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps[:1], ImportOptions{Sites: []string{"avito"}, Update: true}); err != nil {
		t.Fatal(err)
	}
	before := listPool(t, b)
	written, err := b.writeImport(ctx, plan)
	if err != nil || written {
		t.Fatalf("write of a stale plan: written %v, err %v; want nothing written", written, err)
	}
	if d := cmp.Diff(before, listPool(t, b)); d != "" {
		t.Fatalf("a stale plan changed the pool (-before +after):\n%s", d)
	}
}
