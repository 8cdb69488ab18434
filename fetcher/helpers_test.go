package fetcher_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"crawlq/fetcher"
	"crawlq/testbed"
)

const mib = 1 << 20

// target is a loopback test site, plain or TLS, counting its connections.
type target struct {
	srv      *httptest.Server
	newConns atomic.Int64
	// release unblocks /slow handlers at test end.
	release chan struct{}
	// huge reports the bytes /huge and /bomb wrote once their handler ends.
	huge chan int64
}

// startTarget starts a target; tlsOn serves HTTPS with httptest's CA.
func startTarget(t testing.TB, tlsOn bool) *target {
	t.Helper()
	tg := &target{release: make(chan struct{}), huge: make(chan int64, 4)}
	tg.srv = httptest.NewUnstartedServer(tg.mux())
	tg.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			tg.newConns.Add(1)
		}
	}
	if tlsOn {
		tg.srv.StartTLS()
	} else {
		tg.srv.Start()
	}
	t.Cleanup(tg.srv.Close)
	t.Cleanup(func() { close(tg.release) }) // runs before srv.Close
	return tg
}

// url is the target's base URL joined with path.
func (tg *target) url(path string) string { return tg.srv.URL + path }

// tlsConfig is a client TLS config trusting the target's test certificate.
func (tg *target) tlsConfig() *tls.Config {
	return tg.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

func (tg *target) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("/ip", testbed.WhoamiHandler())
	m.HandleFunc("/set", setCookie)
	m.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Header.Get("Cookie")) })
	m.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) { json.NewEncoder(w).Encode(r.Header) })
	m.HandleFunc("/redirect", redirect)
	m.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) })
	m.HandleFunc("/enc", serveEncoded)
	m.HandleFunc("/page.gz", servePageGzip)
	m.HandleFunc("/slow", tg.slow)
	m.HandleFunc("/huge", tg.serveHuge)
	m.HandleFunc("/bomb", tg.serveBomb)
	return m
}

func setCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: r.URL.Query().Get("v"), Path: "/"})
	if to := r.URL.Query().Get("to"); to != "" {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	io.WriteString(w, "set")
}

// redirect sends /redirect?n=k to /redirect?n=k-1 and n=0 to /ip.
func redirect(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	if n <= 0 {
		http.Redirect(w, r, "/ip", http.StatusFound)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/redirect?n=%d", n-1), http.StatusFound)
}

// slow never answers until the client gives up or the test ends.
func (tg *target) slow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-tg.release:
	}
}

// serveHuge streams 100 MiB generated on the fly, reporting what it wrote.
func (tg *target) serveHuge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", strconv.Itoa(100*mib))
	tg.huge <- stream(w, 100*mib)
}

// serveBomb serves a decompression bomb precomputed for ?enc=.
func (tg *target) serveBomb(w http.ResponseWriter, r *http.Request) {
	enc := r.URL.Query().Get("enc")
	w.Header().Set("Content-Encoding", enc)
	w.Write(bomb(enc))
}

var (
	bombsOnce sync.Once
	bombs     map[string][]byte
)

// bomb is a small body that decodes to a lot of zeros: gzip is 100
// concatenated members of 1 MiB each (100 MiB); deflate and br, slower to
// build under -race, hold 8 MiB.
func bomb(enc string) []byte {
	bombsOnce.Do(func() {
		zeros := make([]byte, mib)
		member := compress("gzip", zeros)
		bombs = map[string][]byte{
			"gzip":    bytes.Repeat(member, 100),
			"deflate": compress("deflate", bytes.Repeat(zeros, 8)),
			"br":      compress("br", bytes.Repeat(zeros, 8)),
			"zstd":    compress("zstd", bytes.Repeat(zeros, 8)),
		}
	})
	return bombs[enc]
}

// compress encodes data with coding at the fastest level.
func compress(coding string, data []byte) []byte {
	var buf bytes.Buffer
	var zw io.WriteCloser
	switch coding {
	case "gzip":
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	case "deflate":
		zw, _ = zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	case "br":
		// A 64 KiB window, so the decoder's ring buffer stays small.
		zw = brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestSpeed, LGWin: 16})
	case "zstd":
		zw, _ = zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	}
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// stream writes total bytes in 32 KiB chunks until a write fails.
func stream(w io.Writer, total int) int64 {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	var n int64
	for n < int64(total) {
		k, err := w.Write(chunk)
		n += int64(k)
		if err != nil {
			break
		}
	}
	return n
}

// page is the known body /enc serves.
var page = bytes.Repeat([]byte("<div class=\"card\">Товар 42, цена 1 990 ₽</div>\n"), 4000)

// serveEncoded serves page with Content-Encoding ?enc= (comma list).
func serveEncoded(w http.ResponseWriter, r *http.Request) {
	enc := r.URL.Query().Get("enc")
	body := page
	for _, c := range splitList(enc) {
		var buf bytes.Buffer
		zw := encoder(c, &buf)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
	}
	if enc != "" {
		w.Header().Set("Content-Encoding", strings.ReplaceAll(enc, "deflate-raw", "deflate"))
	}
	w.Write(body)
}

var pageGzip = sync.OnceValue(func() []byte { return compress("gzip", page) })

// servePageGzip serves page gzipped once, for benchmarks.
func servePageGzip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Encoding", "gzip")
	w.Write(pageGzip())
}

func splitList(s string) []string {
	var out []string
	for _, p := range bytes.Split([]byte(s), []byte(",")) {
		if p := string(bytes.TrimSpace(p)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// encoder compresses into w; "deflate-raw" is headerless deflate sent as
// "deflate" by some servers.
func encoder(coding string, w io.Writer) io.WriteCloser {
	switch coding {
	case "gzip":
		return gzip.NewWriter(w)
	case "deflate":
		return zlib.NewWriter(w)
	case "deflate-raw":
		fw, _ := flate.NewWriter(w, flate.DefaultCompression)
		return fw
	case "br":
		return brotli.NewWriter(w)
	case "zstd":
		zw, _ := zstd.NewWriter(w, zstd.WithWindowSize(1<<20))
		return zw
	}
	return nopWriteCloser{w}
}

// startFarm starts a testbed proxy farm closed at test end.
func startFarm(t testing.TB, cfg testbed.FarmConfig) *testbed.Farm {
	t.Helper()
	f, err := testbed.StartFarm(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartFarm: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// proxyURL parses farm proxy i's URL.
func proxyURL(t testing.TB, f *testbed.Farm, i int) *url.URL {
	t.Helper()
	p, err := f.Proxy(i)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// withPassword is u with another password.
func withPassword(u *url.URL, pass string) *url.URL {
	c := *u
	c.User = url.UserPassword(u.User.Username(), pass)
	return &c
}

// newFetcher builds a Fetcher closed at test end, trusting tlsCfg.
func newFetcher(t testing.TB, cfg fetcher.Config) *fetcher.Fetcher {
	t.Helper()
	f := fetcher.New(cfg)
	t.Cleanup(f.Close)
	return f
}

// waitHuge waits for the streaming handler to end and returns its count.
func waitHuge(ctx context.Context, t *testing.T, tg *target) int64 {
	t.Helper()
	select {
	case n := <-tg.huge:
		return n
	case <-ctx.Done():
		t.Fatal("streaming handler did not end after the client cut the body")
		return 0
	}
}

// tlsFront serves TLS on a loopback port and pipes each connection to farm
// proxy i: an https proxy made of an http one. It stops at test end.
func tlsFront(t testing.TB, tg *target, farm *testbed.Farm, i int) *url.URL {
	t.Helper()
	u := proxyURL(t, farm, i)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tg.srv.TLS)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { pipeTo(c, u.Host) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	front := *u
	front.Scheme, front.Host = "https", ln.Addr().String()
	return &front
}

// pipeTo copies c to a new connection to addr and back until either ends.
func pipeTo(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.Close()
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
