package sessions

import (
	"context"
	"errors"
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

// Get sends one GET through the session: it waits for Pace, fetches url
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

// fetch waits for Pace, sends the GET and judges the answer; resp is nil
// when the request failed in transport. err is only a cancellation or an
// unusable session.
func (s *Session) fetch(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int) (*fetcher.Response, detect.Verdict, error) {
	if err := s.Pace(ctx); err != nil {
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
