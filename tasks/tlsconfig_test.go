package tasks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/fetcher"
	"crawlq/tasks"
	"crawlq/testbed"
)

// TestTLSCAFile: a ca_file, global or per site, makes the fetcher trust
// the testbed's CA; without it the certificate is refused; a bad file is
// an error naming the field.
func TestTLSCAFile(t *testing.T) {
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 1, CatalogSize: 100, Dir: t.TempDir(),
		Sites: map[string]testbed.SiteRules{testbed.SiteOzon: {}}}) // no min interval: one client fetches twice
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("not-a-cert.pem", "hello")
	url := tb.HTTPSSiteURL(testbed.SiteOzon) + testbed.OzonSearchPath + "?text=phone"
	tests := []struct {
		name, body string
		wantErr    string // "" : loads; "tls": loads, the fetch fails on the certificate
	}{
		{name: "global", body: "tls: {ca_file: " + tb.CAFile + "}\n"},
		{name: "per site", body: "sites:\n  ozon:\n    tls: {ca_file: " + tb.CAFile + "}\n"},
		{name: "none: verified against the system roots", body: "sites: {}\n", wantErr: "tls"},
		{name: "missing file", body: "tls: {ca_file: nope.pem}\n", wantErr: "tls.ca_file"},
		{name: "not pem", body: "sites:\n  avito:\n    tls: {ca_file: not-a-cert.pem}\n", wantErr: "sites.avito.tls.ca_file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "_")+".yaml", tc.body)
			l, err := tasks.LoadConfig(p)
			if tc.wantErr != "" && tc.wantErr != "tls" {
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadConfig = %v; want an error naming %s and %s", err, p, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := fetcher.New(fetcher.Config{TLS: l.TLS})
			defer f.Close()
			resp, err := f.Do(context.Background(), fetcher.Request{URL: url})
			if tc.wantErr == "tls" {
				if !errors.Is(err, fetcher.ErrTLS) {
					t.Fatalf("fetch without the CA: %v, want a TLS error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("fetch: %v", err)
			}
			if resp.Status != 200 {
				t.Fatalf("fetch: status %d, want 200", resp.Status)
			}
		})
	}
}
