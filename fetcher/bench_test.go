package fetcher_test

import (
	"context"
	"testing"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// BenchmarkDo measures one GET of a 232 KB page served gzipped (3 KB on
// the wire) through a farm proxy, connections reused. The proxy and the
// server run in the same process and count in the figures:
// go test -run '^$' -bench Do -benchmem ./fetcher/
func BenchmarkDo(b *testing.B) {
	plain := startTarget(b, false)
	secure := startTarget(b, true)
	farm := startFarm(b, testbed.FarmConfig{N: 2, Auth: true, SOCKS5Every: 2})
	f := newFetcher(b, fetcher.Config{TLS: secure.tlsConfig()})
	cases := []struct {
		name  string
		proxy int
		url   string
	}{
		{"http-proxy/http", 0, plain.url("/page.gz")},
		{"http-proxy/CONNECT-https", 0, secure.url("/page.gz")},
		{"socks5/http", 1, plain.url("/page.gz")},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			req := fetcher.Request{URL: bc.url, Proxy: proxyURL(b, farm, bc.proxy), Profile: fetcher.ProfileFor("bench")}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Do(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
