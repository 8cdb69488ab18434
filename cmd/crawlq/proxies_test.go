package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	write(good, "127.0.0.2:8080\nuser:pw-one@127.0.0.3:8080\n")
	write(bad, "# more\n127.0.0.4:8080\nsocks5://u:pw-two@127.0.0.5:1080\nnot a proxy line\n127.0.0.6:8080:u:p\n")
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
	if before != after || strings.Contains(after, "pw-one") {
		t.Fatalf("pool changed or leaked a password:\nbefore %s\nafter  %s", before, after)
	}
}

// TestRedisDownIsAClearError: no stack trace, the address and what to do.
func TestRedisDownIsAClearError(t *testing.T) {
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot()
	root.SetArgs([]string{"--redis", "redis://:hunter2@127.0.0.1:" + strconv.Itoa(port) + "/0", "proxies", "list"})
	err = root.Execute()
	if err == nil || !strings.Contains(err.Error(), "does not answer") || strings.Contains(err.Error(), "hunter2") ||
		!strings.Contains(err.Error(), ":***@127.0.0.1") {
		t.Fatalf("err = %v; want 'does not answer' with the password masked", err)
	}
}
