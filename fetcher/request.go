package fetcher

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Request is one request of a session.
type Request struct {
	// Method defaults to GET.
	Method string
	URL    string
	// Header is sent as given; the profile fills in what it lacks, and
	// Accept-Encoding defaults to AcceptEncoding.
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
	if r.Header != nil {
		hr.Header = r.Header.Clone()
	}
	r.profile().Apply(hr.Header)
	if hr.Header.Get("Accept-Encoding") == "" {
		hr.Header.Set("Accept-Encoding", AcceptEncoding)
	}
	return hr, nil
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
