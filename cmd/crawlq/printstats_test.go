package main

import (
	"bytes"
	"strings"
	"testing"

	"crawlq/proxies"
)

// TestPrintStatsCountsProxies: proxies stats says "1 proxy", "2 proxies".
func TestPrintStatsCountsProxies(t *testing.T) {
	for total, want := range map[int]string{1: "1 proxy in the pool\n", 2: "2 proxies in the pool\n"} {
		var buf bytes.Buffer
		if err := printStats(&buf, &proxies.PoolStats{Total: total}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(buf.String(), want) {
			t.Errorf("pool of %d: %q, want it to start with %q", total, buf.String(), want)
		}
	}
}
