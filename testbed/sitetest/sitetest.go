// Package sitetest helps the site packages' tests: it finds the real
// samples (internal/samples) and fetches testbed pages over loopback.
package sitetest

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"crawlq/internal/samples"
	"crawlq/tasks/site"
)

// FetchedAt is the fixed time tests stamp items with.
var FetchedAt = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

// SamplesDir returns the folder of the real samples carried in the
// repository (internal/samples/testdata).
func SamplesDir(t testing.TB) string {
	t.Helper()
	return samples.Dir()
}

// Sample reads the real sample <site>/<file> (.gz decompressed).
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
