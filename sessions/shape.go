package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"crawlq/fetcher"
)

// Shape is how a request to one URL goes out, as the browser of the
// session's profile would send it on the site.
type Shape struct {
	// Kind is fetcher.Navigate (a page) or fetcher.XHR (an API call made
	// by the site's script).
	Kind fetcher.Kind
	// From is the page whose script makes an XHR (a search page for the
	// search API); "" takes the session's last page.
	From string
	// Extra are the site's own headers its script adds, in order; sent on
	// calls to the same site only. A value may hold {deviceid}, the
	// session's stable device id (32 hex digits), and {queryid}, a new
	// query id per request (milliseconds and 10 digits).
	Extra []fetcher.HeaderField
}

// request is the fetcher request of url shaped by the Manager's Shape:
// a navigation comes from the session's last page (none on its first),
// an XHR from its Shape.From or that page.
func (s *Session) request(rawURL string) fetcher.Request {
	var sh Shape
	if s.m.cfg.Shape != nil {
		sh = s.m.cfg.Shape(s.rec.Site, rawURL)
	}
	s.mu.Lock()
	from := s.lastPage
	s.mu.Unlock()
	if sh.Kind == fetcher.XHR && sh.From != "" {
		from = sh.From
	}
	req := fetcher.Request{URL: rawURL, Proxy: s.Proxy(), Jar: s.jar, Profile: s.profile, Kind: sh.Kind, Referer: from}
	if sameSite(from, rawURL) {
		for _, h := range sh.Extra {
			req.Extra = append(req.Extra, fetcher.HeaderField{Name: h.Name, Value: s.expand(h.Value)})
		}
	}
	return req
}

// visited makes a navigation's final URL the session's last page.
func (s *Session) visited(req fetcher.Request, resp *fetcher.Response) {
	if req.Kind != fetcher.Navigate || resp == nil {
		return
	}
	s.mu.Lock()
	s.lastPage = resp.FinalURL
	s.mu.Unlock()
}

// sameSite reports whether an XHR from the page from to target stays on
// one site (a call with no page is on the target's own).
func sameSite(from, target string) bool {
	f, err1 := url.Parse(from)
	t, err2 := url.Parse(target)
	if from == "" || err1 != nil || err2 != nil {
		return true
	}
	return fetcher.FetchSite(f, t) != "cross-site"
}

// expand fills the placeholders of a site header value.
func (s *Session) expand(v string) string {
	if strings.Contains(v, "{deviceid}") {
		v = strings.ReplaceAll(v, "{deviceid}", s.DeviceID())
	}
	if strings.Contains(v, "{queryid}") {
		v = strings.ReplaceAll(v, "{queryid}", fmt.Sprintf("qid%d%010d", time.Now().UnixMilli(), rand.Int64N(1e10)))
	}
	return v
}

// DeviceID is the session's device id: 32 hex digits derived from its
// task and creation time, the same on every request and every server.
func (s *Session) DeviceID() string {
	sum := sha256.Sum256([]byte(s.rec.Task + "|" + s.rec.Created.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(sum[:16])
}
