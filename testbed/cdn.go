package testbed

import (
	"context"
	"crypto/tls"
	_ "embed" // the vendored BotD bundle
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// CDNHost is the host name of the sites' CDN (Ozon's st.ozone.ru): the
// farm's proxies resolve it to the loopback address the CDN listens on,
// and the testbed's certificate names it. Only a client going through a
// farm proxy reaches it, as a browser behind a proxy leaves name
// resolution to the proxy.
const CDNHost = "st.ozone.test"

// CDN paths.
const (
	// ChallengeScriptPath is Ozon's challenge script (the real page loads
	// …/abt-challenge/script_vN.js from st.ozone.ru).
	ChallengeScriptPath = "/abt-challenge/script_v47_1.js"
	// ChallengeStylePath is the challenge page's stylesheet.
	ChallengeStylePath = "/abt-challenge/style_v26.css"
	// BotdPath is a page that runs FingerprintJS BotD 2.0 and posts its
	// verdict to BotdResultPath.
	BotdPath = "/botd/"
	// BotdResultPath receives the BotD page's verdict (JSON).
	BotdResultPath = "/botd/result"
	// BotdCookie is set by the BotD page once its verdict is posted.
	BotdCookie = "botd_done"
	// RenderPath is a page rendered by its script, as Wildberries' are:
	// its HTML is an empty shell; its script fetches RenderItemsPath and
	// draws one div.product-card per item.
	RenderPath = "/render/"
	// RenderItemsPath is the JSON the render page's script draws.
	RenderItemsPath = "/render/items.json"
)

// RenderItems are the items the render page draws (their names).
var RenderItems = []string{"Велосипед горный", "Самокат детский", "Шлем защитный"}

// botdBundle is FingerprintJS BotD 2.0.0's ESM bundle (MIT; see
// testdata/botd/README.md).
//
//go:embed testdata/botd/botd.esm.js
var botdBundle []byte

// CDN serves the sites' static files from its own host name, over http
// and https: the scripts a page loads from another host. It logs every
// request it serves (Log, Site "cdn"). Safe for concurrent use.
type CDN struct {
	// Log records every request the CDN served.
	Log *Log

	now      func() time.Time
	srv, tls *http.Server
	ln, tln  net.Listener
	mu       sync.Mutex
	botd     []string // the BotD verdicts posted, in order
	wg       sync.WaitGroup
}

// startCDN listens on 127.0.0.1 for plain http; startTLS adds https.
func startCDN(now func() time.Time, zl *zap.Logger) (*CDN, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cdn listen: %w", err)
	}
	c := &CDN{Log: &Log{}, now: now, ln: ln}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	c.serve(c.srv, ln, zl)
	return c, nil
}

// startTLS serves the CDN over TLS with cert on another port.
func (c *CDN) startTLS(cert tls.Certificate, zl *zap.Logger) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("cdn https listen: %w", err)
	}
	c.tln = ln
	c.tls = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	c.serve(c.tls, c.tln, zl)
	return nil
}

func (c *CDN) serve(srv *http.Server, ln net.Listener, zl *zap.Logger) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		serve := srv.Serve
		if srv.TLSConfig != nil {
			serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
		}
		if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			zl.Warn("cdn stopped", zap.Error(err))
		}
	}()
}

// URL is the CDN's base URL by its host name, https when secure (""
// when it has no TLS listener).
func (c *CDN) URL(secure bool) string {
	ln, scheme := c.ln, "http"
	if secure {
		ln, scheme = c.tln, "https"
	}
	if ln == nil {
		return ""
	}
	return scheme + "://" + CDNHost + ":" + portOf(ln.Addr())
}

// portOf is addr's port.
func portOf(addr net.Addr) string {
	_, port, _ := net.SplitHostPort(addr.String())
	return port
}

// Botd returns the BotD verdicts posted so far (each the JSON the page
// sent: {"bot":…,"botKind":…} or {"error":…}).
func (c *CDN) Botd() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.botd...)
}

// ServeHTTP serves the CDN's files and logs the request.
func (c *CDN) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := Entry{Site: "cdn", IP: clientIP(r), Method: r.Method, Path: r.URL.RequestURI(), Start: c.now(), Verdict: VerdictOK}
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	c.route(rec, r)
	e.Status, e.End = rec.status, c.now()
	c.Log.add(e)
	rec.send()
}

// route serves one request.
func (c *CDN) route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case WhoamiPath: // the IP echo crawlq's exit probes ask
		serveWhoami(w, r)
	case ChallengeScriptPath:
		serveStatic(w, "application/javascript", externalChallengeScript)
	case ChallengeStylePath:
		serveStatic(w, "text/css", "body{font-family:sans-serif}.container{margin:40px auto;max-width:600px}")
	case BotdPath:
		serveStatic(w, "text/html; charset=utf-8", botdPage)
	case BotdPath + "botd.esm.js":
		serveStatic(w, "application/javascript", string(botdBundle))
	case BotdResultPath:
		c.botdResult(w, r)
	case RenderPath:
		serveStatic(w, "text/html; charset=utf-8", renderShell)
	case RenderPath + "app.js":
		serveStatic(w, "application/javascript", renderScript)
	case RenderItemsPath:
		items, _ := json.Marshal(RenderItems)
		serveStatic(w, "application/json", string(items))
	default:
		http.NotFound(w, r)
	}
}

// serveStatic writes body as a cacheable static file of type ct.
func serveStatic(w http.ResponseWriter, ct, body string) {
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	io.WriteString(w, body)
}

// botdResult keeps the verdict the BotD page posted.
func (c *CDN) botdResult(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "post the verdict", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		http.Error(w, "read verdict", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.botd = append(c.botd, strings.TrimSpace(string(raw)))
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// close stops both listeners and waits for them.
func (c *CDN) close(ctx context.Context) {
	for _, srv := range []*http.Server{c.srv, c.tls} {
		if srv != nil && srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}
	c.wg.Wait()
}

// externalChallengeScript is Ozon's challenge as an external script: it
// reads the nonce, difficulty and cookie from its own <script> tag, finds
// n with fnv1a(nonce+":"+n) >>> (32-bits) == 0, posts "nonce.n" to the
// site's /abt/result (which sets the clearance cookie, as Ozon's does)
// and reloads the page.
const externalChallengeScript = `(function(){var d=document.currentScript.dataset,n=d.nonce,b=+d.bits,i=0;
function h(s){var x=0x811c9dc5;for(var k=0;k<s.length;k++){x^=s.charCodeAt(k);x=Math.imul(x,0x01000193)>>>0}return x}
while((h(n+":"+i)>>>(32-b))!==0)i++;
var x=new XMLHttpRequest();x.open("POST","` + AbtResultPath + `");
x.onloadend=function(){location.reload()};x.send(n+"."+i)})();
`

// renderShell is the render page as the server sends it: no items.
const renderShell = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>Каталог</title>
<script src="app.js" defer></script></head><body><div id="app" class="catalog"></div></body></html>
`

// renderScript draws the items it fetches into #app.
const renderScript = `fetch("items.json").then(r => r.json()).then(items => {
  const app = document.getElementById("app");
  for (const name of items) {
    const card = document.createElement("div");
    card.className = "product-card";
    card.textContent = name;
    app.appendChild(card);
  }
});
`

// botdPage runs BotD (without its monitoring call home), posts the
// verdict to BotdResultPath and then sets BotdCookie.
const botdPage = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>BotD</title></head>
<body><pre id="verdict">running</pre>
<script type="module">
import {load} from "./botd.esm.js";
let verdict;
try { verdict = (await load({monitoring: false})).detect(); } catch (e) { verdict = {error: String(e)}; }
const body = JSON.stringify(verdict);
document.getElementById("verdict").textContent = body;
await fetch("` + BotdResultPath + `", {method: "POST", body});
document.cookie = "` + BotdCookie + `=1; path=/";
</script></body></html>
`
