package sessions

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
)

// Step is one paced, judged and recorded request of a session.
type Step struct {
	// Response is nil when the request failed in transport.
	Response *fetcher.Response
	Verdict  detect.Verdict
	// Action is what the session did after the verdict.
	Action Action
}

// Get sends one GET through the session: it waits for Pace and admit, fetches url
// through the session's proxy with its cookies and profile, judges the
// answer as a page of kind on the session's site (page numbers a listing
// page, 0 if none) and records the verdict.
func (s *Session) Get(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int) (Step, error) {
	resp, v, err := s.fetch(ctx, f, d, kind, url, page)
	if err != nil {
		return Step{}, err
	}
	act, rerr := s.Record(ctx, v, latencyOf(resp))
	return Step{Response: resp, Verdict: v, Action: act}, rerr
}

// fetch waits for its turn (ready), sends the GET and judges the answer; resp is nil
// when the request failed in transport. err is only a cancellation or an
// unusable session.
func (s *Session) fetch(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int) (*fetcher.Response, detect.Verdict, error) {
	if err := s.ready(ctx); err != nil {
		return nil, detect.Verdict{}, err
	}
	req := s.request(url)
	resp, err := f.Do(ctx, req)
	s.touchExit()
	if err == nil {
		s.visited(req, resp)
	}
	if ctx.Err() != nil {
		return nil, detect.Verdict{}, ctx.Err() // cancelled by the caller: nobody's fault
	}
	if errors.Is(err, fetcher.ErrBodyTooLarge) && resp != nil {
		err = nil // judge the page cut at the cap: its size is not the proxy's fault
	}
	v := d.Judge(s.rec.Site, kind, judged(resp, err, url, page))
	if err != nil {
		resp = nil
	}
	return resp, v, nil
}

// Post sends one POST of body through the session as the page's script
// sends it (the site's shape for url: an XHR on its API paths; Origin and
// Content-Type as a browser's fetch() sends them), paced like Get. The
// answer is neither judged nor recorded: it is a challenge's exchange,
// read by the caller. err is the transport's, or a cancellation.
func (s *Session) Post(ctx context.Context, f *fetcher.Fetcher, rawURL, contentType string, body []byte) (*fetcher.Response, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	req := s.request(rawURL)
	req.Method, req.Body = http.MethodPost, body
	req.Extra = append(req.Extra, fetcher.HeaderField{Name: "content-type", Value: contentType})
	req.Extra = append(req.Extra, fetcher.HeaderField{Name: "origin", Value: pageOrigin(req.Referer, rawURL)})
	resp, err := f.Do(ctx, req)
	s.touchExit()
	s.mu.Lock()
	s.lastDone = time.Now()
	s.mu.Unlock()
	return resp, err
}

// pageOrigin is the origin of the page a script posts from: the
// referer's, else the target's own.
func pageOrigin(referer, target string) string {
	for _, raw := range []string{referer, target} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
	}
	return ""
}

func judged(resp *fetcher.Response, err error, url string, page int) *detect.Response {
	if err != nil || resp == nil {
		return &detect.Response{Err: err, FinalURL: url, Page: page}
	}
	return &detect.Response{Status: resp.Status, FinalURL: resp.FinalURL, Header: resp.Header,
		Body: resp.Body, Truncated: resp.Truncated, Page: page}
}

func latencyOf(resp *fetcher.Response) time.Duration {
	if resp == nil {
		return 0
	}
	return resp.Latency
}
