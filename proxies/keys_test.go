package proxies

import (
	"context"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
)

// TestLuaSetKeysMatchGo: the keys lua/lib/sets.lua builds for every set
// of the known HASH are the ones keys.go builds, sorted by field, with
// each site listed once.
func TestLuaSetKeysMatchGo(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBProxies)
	k := newKeys("lua-keys")
	for _, f := range []string{knownField("oz", Mobile), knownField("av", Datacenter), knownField("av", Residential)} {
		if err := rdb.HSet(ctx, k.known(), f, "").Err(); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := fs.ReadFile(luaFiles, "lua/lib/sets.lua")
	if err != nil {
		t.Fatal(err)
	}
	src := string(lib) + `
local out = {}
local sets, sites = known_sets(KEYS[1])
for _, s in ipairs(sets) do
  out[#out + 1] = {s.field, s.site, s.class, s.ready, s.quarantine, s.leases, s.cleared, s.stats}
end
for _, s in ipairs(sites) do out[#out + 1] = {s.site} end
return out`
	got, err := rdb.Eval(ctx, src, []string{k.known()}).Slice()
	if err != nil {
		t.Fatal(err)
	}
	set := func(site string, c Class) []any {
		return []any{knownField(site, c), site, string(c), k.ready(site, c), k.quarantine(site, c),
			k.leases(site), k.cleared(site), k.stats(site)}
	}
	want := []any{set("av", Datacenter), set("av", Residential), set("oz", Mobile), []any{"av"}, []any{"oz"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("lua keys (-go +lua):\n%s", d)
	}
}
