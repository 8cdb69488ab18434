package browser

import (
	"context"
	"crawlq/fetcher"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
)

// quietFor is how long the network must have been quiet (no request
// paused at the interception), and the page loaded (its scripts run), for
// a rendered page without WaitFor.
const quietFor = 500 * time.Millisecond

// render waits, once the page has cleared, until its scripts have
// rendered it (one of job.WaitFor matches, or without WaitFor the network
// has been quiet for quietFor), then keeps its DOM in the result.
func (p *pageRun) render(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var loaded time.Time // when the page was first seen loaded
	for !p.rendered(ctx, &loaded) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s shows none of %q within the timeout: %w", fetcher.ErrNotRendered, p.job.URL, p.job.WaitFor, ctx.Err())
		case <-tick.C:
		}
	}
	var dom string
	if err := p.eval(ctx, "document.documentElement.outerHTML", &dom); err != nil {
		return fmt.Errorf("read the rendered page %s: %w", p.job.URL, err)
	}
	p.mu.Lock()
	p.res.DOM = []byte("<!DOCTYPE html>" + dom)
	p.mu.Unlock()
	return nil
}

// rendered checks once whether the page is rendered. A page answered
// with an error status (a block page) is not waited for. Without WaitFor
// it is rendered once loaded (its deferred scripts have run) and quiet
// for quietFor since both the last request and the load: a request a
// script made while it ran reaches the interception by then.
func (p *pageRun) rendered(ctx context.Context, loaded *time.Time) bool {
	p.mu.Lock()
	paused, active, failed := p.paused, p.active, p.res.Status >= 400
	p.mu.Unlock()
	if failed {
		return true
	}
	if len(p.job.WaitFor) == 0 {
		var complete bool
		if loaded.IsZero() && p.eval(ctx, `document.readyState === "complete"`, &complete) == nil && complete {
			*loaded = time.Now()
		}
		return !loaded.IsZero() && paused == 0 && time.Since(active) >= quietFor && time.Since(*loaded) >= quietFor
	}
	sels, _ := json.Marshal(p.job.WaitFor)
	var found bool
	err := p.eval(ctx, "("+string(sels)+").some(s => { try { return document.querySelector(s) !== null } catch (e) { return false } })", &found)
	return err == nil && found
}

// eval evaluates expr in the page and decodes its value into out.
func (p *pageRun) eval(ctx context.Context, expr string, out any) error {
	yes := true
	res, err := cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: &yes})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluate: %s", res.ExceptionDetails.Text)
	}
	if res.Result == nil {
		return errors.New("evaluate: no result")
	}
	return json.Unmarshal(res.Result.Value, out)
}
