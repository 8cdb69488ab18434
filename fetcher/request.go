package fetcher

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Request is one request of a session.
type Request struct {
	// Method defaults to GET.
	Method string
	URL    string
	// Kind is what the request is to the profile's browser: Navigate (the
	// default) or XHR. It picks the header set, their order and values.
	Kind Kind
	// Referer is the page the request comes from: for a navigation the
	// page whose link is followed ("" for a typed URL), for an XHR the
	// page whose script calls (a session's previous page). It gives the
	// Referer (by the browsers' default policy), Sec-Fetch-Site and, on a
	// cross-origin XHR, Origin.
	Referer string
	// Extra are the page's own headers (a site's x-requested-with, …) in
	// the order its script sets them, placed where the browser puts them.
	Extra []HeaderField
	// Header is sent as given: its values replace the profile's, names
	// the browser does not send follow Extra, sorted.
	Header http.Header
	// Body is sent as is (kept whole so 307/308 redirects can resend it).
	Body []byte
	// Proxy is http://, https:// or socks5://, with optional user:password;
	// nil sends directly.
	Proxy *url.URL
	// Jar is the session's cookie jar (net/http/cookiejar); nil keeps no
	// cookies.
	Jar http.CookieJar
	// Profile is the session's browser; the zero Profile is DefaultProfile.
	Profile Profile
}

// Response is a fetched page with its decoded, capped body.
type Response struct {
	Status int
	// Proto is the final response's protocol: "HTTP/2.0" or "HTTP/1.1".
	Proto string
	// FinalURL is the URL after redirects.
	FinalURL string
	// Header is the final response's header; Content-Encoding and
	// Content-Length are dropped when the body was decoded.
	Header http.Header
	// Body is the decoded body, at most the cap.
	Body []byte
	// Truncated says the body passed the cap and was cut.
	Truncated bool
	// BytesRead counts the decoded bytes read: at most the cap + 1.
	BytesRead int64
	// Latency runs from sending the request to the last body byte read,
	// redirects included.
	Latency time.Duration
	// Proxy is the proxy URL with its password masked.
	Proxy string
}

// newHTTPRequest builds the net/http request of r under ctx.
func newHTTPRequest(ctx context.Context, r Request) (*http.Request, error) {
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, cmp.Or(r.Method, http.MethodGet), r.URL, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	fields := r.profile().fields(r.Kind, hr.URL, r.Referer, r.extra())
	order := make([]string, len(fields))
	for i, f := range fields {
		order[i] = f.Name
		if f.Value != "" {
			hr.Header.Add(f.Name, f.Value)
		}
	}
	return hr.WithContext(withHeaderOrder(hr.Context(), order)), nil
}

// extra is r.Extra followed by r.Header's fields, sorted by name.
func (r Request) extra() []HeaderField {
	out := slices.Clone(r.Extra)
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[k] {
			out = append(out, HeaderField{Name: k, Value: v})
		}
	}
	return out
}

type headerOrderKey struct{}

// withHeaderOrder carries the order a request's headers go out in (lower
// case names, cookie included) to the impersonating transport.
func withHeaderOrder(ctx context.Context, order []string) context.Context {
	return context.WithValue(ctx, headerOrderKey{}, order)
}

// headerOrderOf is the order withHeaderOrder put in ctx, nil if none.
func headerOrderOf(ctx context.Context) []string {
	o, _ := ctx.Value(headerOrderKey{}).([]string)
	return o
}

func (r Request) profile() Profile {
	if r.Profile.IsZero() {
		return DefaultProfile()
	}
	return r.Profile
}

// newResponse assembles the Response of hr with its read body b.
func newResponse(hr *http.Response, b body, start time.Time, proxy string) *Response {
	h := hr.Header
	if b.decoded {
		h.Del("Content-Encoding")
		h.Del("Content-Length")
	}
	return &Response{
		Status:    hr.StatusCode,
		Proto:     hr.Proto,
		FinalURL:  hr.Request.URL.String(),
		Header:    h,
		Body:      b.data,
		Truncated: b.truncated,
		BytesRead: b.read,
		Latency:   time.Since(start),
		Proxy:     proxy,
	}
}
