package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
)

// TestProxiesImportBadLineLeavesPool: a file with one bad line among good
// ones exits non-zero, names FILE:LINE, and the pool stays as it was.
func TestProxiesImportBadLineLeavesPool(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	bad := filepath.Join(dir, "bad.txt")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good, "127.0.0.2:8080\nuser:"+masktest.ProxyPassword+"@127.0.0.3:8080\n")
	write(bad, "# more\n127.0.0.4:8080\nsocks5://u:"+masktest.ProxyPassword+"@127.0.0.5:1080\nnot a proxy line\n127.0.0.6:8080:u:p\n")
	if _, err := run(t, "proxies", "import", good); err != nil {
		t.Fatalf("import good file: %v", err)
	}
	before, err := run(t, "proxies", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(t, "proxies", "import", bad)
	if err == nil || !strings.Contains(err.Error(), bad+":4:") {
		t.Fatalf("import bad file: %v, want an error naming %s:4", err, bad)
	}
	after, err := run(t, "proxies", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if before != after || strings.Contains(after, masktest.ProxyPassword) {
		t.Fatalf("pool changed or leaked a password:\nbefore %s\nafter  %s", before, after)
	}
}

// TestRedisDownIsAClearError: no stack trace, the address and what to do.
func TestRedisDownIsAClearError(t *testing.T) {
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd()
	root.SetArgs([]string{"--redis", "redis://:" + masktest.RedisPassword + "@127.0.0.1:" + strconv.Itoa(port) + "/0", "proxies", "list"})
	err = root.Execute()
	if err == nil || !strings.Contains(err.Error(), "does not answer") || strings.Contains(err.Error(), masktest.RedisPassword) ||
		!strings.Contains(err.Error(), ":***@127.0.0.1") {
		t.Fatalf("err = %v; want 'does not answer' with the password masked", err)
	}
}

// TestProxiesImportRefusesSurprises: a typo in --sites and a re-import
// that would move the pool's proxies to another class are refused with
// one line saying why (and, for the move, what would change and that
// --update does it); the pool stays as it was. With --update the move is
// made and reported.
func TestProxiesImportRefusesSurprises(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	file := filepath.Join(t.TempDir(), "proxies.txt")
	if err := os.WriteFile(file, []byte("127.0.0.2:8080\nuser:"+masktest.ProxyPassword+"@127.0.0.3:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "proxies", "import", file); err != nil {
		t.Fatal(err)
	}
	before, err := run(t, "proxies", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "unknown site", args: []string{"--sites", "amazon"},
			want: []string{`import refused, pool unchanged: --sites: site "amazon" is not a site of the configuration`, "known: avito, ozon, wildberries"}},
		{name: "another class", args: []string{"--class", "residential"},
			want: []string{"import refused, pool unchanged: 2 proxies already in the pool would change: 2 proxies from datacenter on every site to residential on every site", "--update"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runMain(t, append([]string{"--redis", url, "proxies", "import", file}, tc.args...)...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if err == nil || len(lines) != 1 {
				t.Fatalf("import %v: err %v, stderr %q; want a failure with one line", tc.args, err, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			if after, _ := run(t, "proxies", "list", "--json"); after != before {
				t.Fatalf("a refused import changed the pool:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	out, err := run(t, "proxies", "import", file, "--sites", "ozon", "--update")
	if err != nil || !strings.Contains(out, "2 changed (2 proxies from datacenter on every site to datacenter on ozon)") {
		t.Fatalf("import --sites ozon --update: %v\n%s", err, out)
	}
	if list, _ := run(t, "proxies", "list"); strings.Count(list, "ozon") != 2 {
		t.Fatalf("after --update, want both proxies on ozon:\n%s", list)
	}
}

// TestProxiesImportGateway: a gateway line imports as its sessions'
// slots and `proxies stats` lists it, never its password; a rotating
// gateway is refused for sites with a min_interval, the pool unchanged,
// and imported with --allow-rotating.
func TestProxiesImportGateway(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	dir := t.TempDir()
	gw := filepath.Join(dir, "gw.txt")
	rot := filepath.Join(dir, "rot.yaml")
	if err := os.WriteFile(gw, []byte("http://brd-customer-c1-zone-res-session-{session}:"+masktest.GatewayPassword+"@127.0.0.9:22225 sessions=5 idle=30s exit=header:x-luminati-ip\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rot, []byte("proxies:\n  - url: http://rot:"+masktest.GatewayPassword+"@127.0.0.8:7000\n    rotating: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "proxies", "import", gw); err != nil || out != "imported 1 gateway (5 sessions) as datacenter from "+gw+": 1 new, 0 already in the pool unchanged\n" {
		t.Fatalf("import gateway: %q, %v", out, err)
	}
	out, err := run(t, "proxies", "stats")
	if err != nil || !strings.Contains(out, "GATEWAY") || !strings.Contains(out, "header:x-luminati-ip") ||
		strings.Contains(out, masktest.GatewayPassword) {
		t.Fatalf("stats:\n%s\n%v", out, err)
	}
	before, _ := run(t, "proxies", "list", "--json")
	_, err = run(t, "proxies", "import", rot)
	if err == nil || !strings.Contains(err.Error(), "import refused, pool unchanged: "+rot+":2: http://rot:***@127.0.0.8:7000 is a rotating gateway") ||
		strings.Contains(err.Error(), masktest.GatewayPassword) {
		t.Fatalf("rotating gateway: %v", err)
	}
	if after, _ := run(t, "proxies", "list", "--json"); after != before {
		t.Fatal("a refused import changed the pool")
	}
	if _, err := run(t, "proxies", "import", "--allow-rotating", rot); err != nil {
		t.Fatalf("--allow-rotating: %v", err)
	}
}

// TestProxiesImportModem: a modem line imports with its change link;
// `proxies stats` and `status` show the pool's modems; no output shows
// the link's key or the password.
func TestProxiesImportModem(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	file := filepath.Join(t.TempDir(), "modems.txt")
	line := "http://mob:" + masktest.ProxyPassword + "@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/" + masktest.ChangeKey + "/m0 change_every=60s change_settle=10s\n"
	if err := os.WriteFile(file, []byte(line+"http://127.0.0.6:3128 change_settle=5s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, "proxies", "import", file)
	if err == nil || !strings.Contains(err.Error(), "modems.txt:2") || !strings.Contains(err.Error(), "change=URL") {
		t.Fatalf("a change_ option without its link: %v", err)
	}
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "proxies", "import", file); err != nil || !strings.Contains(out, "1 new") {
		t.Fatalf("import modem: %q, %v", out, err)
	}
	for _, args := range [][]string{{"proxies", "stats"}, {"status"}, {"proxies", "list", "--json"}} {
		out, err := run(t, args...)
		if err != nil || strings.Contains(out, masktest.Marker) {
			t.Fatalf("%v:\n%s\n%v", args, out, err)
		}
		if args[0] != "proxies" || args[1] == "stats" {
			if !strings.Contains(out, "1, 0 rotating") {
				t.Fatalf("%v shows no modem line:\n%s", args, out)
			}
		}
	}
}

// TestProxiesReimportGatewayAndModem: re-importing a gateway and a modem
// with every option changed and without --update exits 1 with one line
// saying what would change, keys masked, and the pool stays as it was;
// with --update the import says what changed and removed, and the same
// file again changes nothing.
func TestProxiesReimportGatewayAndModem(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	dir := t.TempDir()
	old, changed := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(old, "http://u-{session}:gw-s3cret@127.0.0.9:22225 sessions=5 ttl=10m exit=header:x-ip\n"+
		"http://mob:mob-s3cret@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/KEY-s3cret-1/m0 change_every=60s\n")
	write(changed, "http://u-{session}:gw-s3cret@127.0.0.9:22225 sessions=2 ttl=20m exit=probe\n"+
		"http://mob:mob-s3cret@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/KEY-s3cret-2/m0 change_every=90s\n")
	if out, err := run(t, "proxies", "import", old); err != nil || !strings.Contains(out, "imported 1 gateway (5 sessions) and 1 modem as datacenter") {
		t.Fatalf("import: %q, %v", out, err)
	}
	before, _ := run(t, "proxies", "list", "--json")
	_, stderr, err := runMain(t, "--redis", url, "proxies", "import", changed)
	for _, w := range []string{"import refused, pool unchanged: 1 gateway and 1 modem already in the pool would change: ",
		"gateway http://u-{session}:***@127.0.0.9:22225 (" + changed + ":1): sessions 5 → 2 (3 slots removed), ttl 10m → 20m, exit header:x-ip → probe",
		"modem http://mob:***@127.0.0.7:3128 (" + changed + ":2): change http://127.0.0.1:9/changeip/***/*** → another that prints the same (masked), change_every 1m → 1m30s",
		"rerun with --update"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
	if err == nil || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "s3cret") {
		t.Fatalf("re-import without --update: err %v, stderr %q; want one line, no secret", err, stderr)
	}
	if after, _ := run(t, "proxies", "list", "--json"); after != before {
		t.Fatalf("a refused re-import changed the pool:\nbefore %s\nafter  %s", before, after)
	}
	out, err := run(t, "proxies", "import", changed, "--update")
	if err != nil || !strings.Contains(out, "imported 1 gateway (2 sessions) and 1 modem as datacenter from "+changed+": 0 new, 0 already in the pool unchanged, 2 changed (") ||
		strings.Contains(out, "s3cret") {
		t.Fatalf("re-import --update: %q, %v", out, err)
	}
	if out, err := run(t, "proxies", "import", changed); err != nil || !strings.Contains(out, "0 new, 2 already in the pool unchanged\n") {
		t.Fatalf("the same file again: %q, %v", out, err)
	}
}

// TestProxiesListAndRemoveGateway: `proxies list` shows a gateway once,
// its {session} as written and its options, and a modem with its change
// link masked; `proxies remove` with the gateway's ID removes all its
// slots, and with an ID the pool does not hold exits 1 saying so,
// removing nothing.
func TestProxiesListAndRemoveGateway(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	file := filepath.Join(t.TempDir(), "pool.txt")
	list := "http://brd-customer-c1-session-{session}:gw-s3cret@127.0.0.9:22225 sessions=20 idle=30s exit=header:x-luminati-ip\n" +
		"http://mob:mob-s3cret@127.0.0.7:3128 change=http://127.0.0.1:9/changeip/KEY-s3cret/m0 change_every=90s\n" +
		"u:p-s3cret@127.0.0.5:8080\n"
	if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "proxies", "import", file)
	if err != nil || out != "imported 1 gateway (20 sessions), 1 modem and 1 proxy as datacenter from "+file+": 3 new, 0 already in the pool unchanged\n" {
		t.Fatalf("import: %q, %v", out, err)
	}
	out, err = run(t, "proxies", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 4 || strings.Contains(out, "s3cret") || strings.Contains(out, "%7B") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	var gw string
	for _, want := range []string{
		"gateway  http://brd-customer-c1-session-{session}:***@127.0.0.9:22225  datacenter  *      sessions=20 ttl=10m idle=30s exit=header:x-luminati-ip",
		"modem    http://mob:***@127.0.0.7:3128  ",
		"exit=probe change=http://127.0.0.1:9/changeip/***/*** change_method=GET change_every=1m30s change_settle=10s",
	} {
		found := false
		for _, l := range lines {
			if strings.Contains(l, want) {
				found = true
				if strings.Contains(l, "gateway") {
					gw = strings.Fields(l)[0]
				}
			}
		}
		if !found {
			t.Errorf("list has no line with %q:\n%s", want, out)
		}
	}
	before, _ := run(t, "proxies", "list", "--json")
	_, err = run(t, "proxies", "remove", gw, "f00d")
	if err == nil || err.Error() != "remove refused, pool unchanged: not in the pool: f00d (give the IDs proxies list shows: a proxy's, a modem's or a gateway's)" {
		t.Fatalf("remove with an unknown ID: %v", err)
	}
	if after, _ := run(t, "proxies", "list", "--json"); after != before {
		t.Fatal("a refused removal changed the pool")
	}
	if out, err := run(t, "proxies", "remove", gw); err != nil || out != "removed 1 gateway (20 sessions)\n" {
		t.Fatalf("remove the gateway: %q, %v", out, err)
	}
	if out, _ := run(t, "proxies", "stats"); !strings.Contains(out, "2 proxies in the pool") {
		t.Fatalf("after removing the gateway, want its 20 slots gone:\n%s", out)
	}
}

// TestWorkerRefusesBadExitFlags: the worker names a bad --exit-busy or
// --exit-probe before it starts.
func TestWorkerRefusesBadExitFlags(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"worker", "--exit-busy", "sometimes"}},
		{[]string{"worker", "--exit-probe", "ipify.org"}},
	} {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.args[1]) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.args[1])
		}
	}
}
