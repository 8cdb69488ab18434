// Package sitetest helps the site packages' tests: it finds the real
// samples in ../shared/samples and fetches testbed pages over loopback.
package sitetest

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"crawlq/tasks/site"
)

// FetchedAt is the fixed time tests stamp items with.
var FetchedAt = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

// SamplesDir walks up from the working directory until shared/samples
// exists and returns it; the test fails when there is none.
func SamplesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "samples")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("shared/samples not found in any parent of the working directory; the real samples live at ../shared/samples relative to the repo root")
		}
		dir = parent
	}
}

// Sample reads shared/samples/<site>/<file> (.gz decompressed).
func Sample(t testing.TB, siteName, file string) []byte {
	t.Helper()
	b, err := site.ReadFile(filepath.Join(SamplesDir(t), siteName, file))
	if err != nil {
		t.Fatalf("sample %s/%s: %v", siteName, file, err)
	}
	return b
}

// Get fetches url (a loopback testbed URL) and returns the body; a status
// other than 200 fails the test.
func Get(t testing.TB, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v", url, resp.StatusCode, err)
	}
	return b
}
