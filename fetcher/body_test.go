package fetcher_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/testbed"
)

func TestDoDecodesBodies(t *testing.T) {
	tg := startTarget(t, false)
	f := newFetcher(t, fetcher.Config{})
	for _, enc := range []string{"", "gzip", "deflate", "deflate-raw", "br", "zstd", "gzip,br", "gzip,zstd"} {
		t.Run("enc="+enc, func(t *testing.T) {
			resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/enc?enc=" + enc)})
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if string(resp.Body) != string(page) || resp.BytesRead != int64(len(page)) || resp.Truncated {
				t.Errorf("body %d bytes (read %d, truncated %v), want the %d byte page", len(resp.Body), resp.BytesRead, resp.Truncated, len(page))
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("Content-Encoding %q left on a decoded body", ce)
			}
		})
	}
}

func TestDecompressionBombStopsAtCap(t *testing.T) {
	tg := startTarget(t, false)
	bomb("gzip") // build the bombs before measuring
	const limit = 1 * mib
	f := newFetcher(t, fetcher.Config{BodyCap: limit})
	// window is the decoder's own buffer, whatever the body: deflate's is
	// 32 KiB; brotli's follows the stream's window (64 KiB here, up to
	// 16 MiB in the wild).
	for _, tc := range []struct {
		name   string
		window int64
	}{{"gzip", 64 << 10}, {"deflate", 64 << 10}, {"br", 1 * mib}, {"zstd", 2 * mib}} {
		enc := tc.name
		t.Run(tc.name, func(t *testing.T) {
			alloc := allocated(func() {
				resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/bomb?enc=" + enc)})
				checkCut(t, resp, err, limit)
			})
			if alloc > 4*limit+tc.window {
				t.Errorf("allocated %d MiB while reading a bomb capped at 1 MiB", alloc/mib)
			}
		})
	}
}

func TestHugeBodyThroughProxyIsCutAtCap(t *testing.T) {
	tg := startTarget(t, false)
	farm := startFarm(t, testbed.FarmConfig{N: 1, Auth: true})
	f := newFetcher(t, fetcher.Config{}) // default cap: 8 MiB
	alloc := allocated(func() {
		resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/huge"), Proxy: proxyURL(t, farm, 0)})
		checkCut(t, resp, err, fetcher.DefaultBodyCap)
	})
	// The whole process (client, proxy and server) allocated about the cap
	// reading a 100 MiB body, not the body.
	if alloc > 4*fetcher.DefaultBodyCap {
		t.Errorf("allocated %d MiB reading a body capped at 8 MiB", alloc/mib)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	written := waitHuge(ctx, t, tg)
	if written >= 100*mib {
		t.Errorf("server wrote the whole %d MiB: the client read past the cap", written/mib)
	}
	t.Logf("allocated %.1f MiB; server wrote %.1f MiB of 100 before the cut reached it", float64(alloc)/mib, float64(written)/mib)
}

// checkCut asserts a body cut at limit: partial response plus BodyTooLarge.
func checkCut(t *testing.T, resp *fetcher.Response, err error, limit int64) {
	t.Helper()
	if !errors.Is(err, fetcher.ErrBodyTooLarge) || fetcher.KindOf(err) != fetcher.BodyTooLarge {
		t.Fatalf("err = %v, want body too large", err)
	}
	if resp == nil {
		t.Fatal("no partial response with the body too large error")
	}
	if !resp.Truncated || int64(len(resp.Body)) != limit || resp.BytesRead != limit+1 {
		t.Errorf("truncated %v, body %d, read %d; want true, %d, %d", resp.Truncated, len(resp.Body), resp.BytesRead, limit, limit+1)
	}
}

// allocated reports the bytes the process allocated while f ran.
func allocated(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}
