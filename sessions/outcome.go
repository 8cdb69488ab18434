package sessions

import (
	"time"

	"crawlq/detect"
	"crawlq/proxies"
)

// Outcome maps a verdict to what the broker is told about the proxy:
//
//	OK           -> release with latency (cooldown = min_interval)
//	Blocked      -> ban (quarantine)
//	RateLimited  -> cooldown by retry-after
//	ProxyFailure -> failed (penalty)
//	NotFound, ServerError -> neutral, no proxy penalty
//	Suspect      -> neutral: not judged until a second proxy answers
//	                (see Session.Confirm)
func Outcome(v detect.Verdict, latency time.Duration) proxies.Outcome {
	switch v.Kind {
	case detect.OK:
		return proxies.OK(latency)
	case detect.Blocked:
		return proxies.Banned(v.Reason)
	case detect.RateLimited:
		return proxies.RateLimited(v.RetryAfter)
	case detect.ProxyFailure:
		return proxies.Failed(v.Reason)
	default:
		return proxies.Neutral()
	}
}

// penalty is how a verdict moves the session's error score.
func penalty(v detect.Verdict) float64 {
	switch v.Kind {
	case detect.OK:
		return -0.5
	case detect.Blocked, detect.RateLimited, detect.ProxyFailure:
		return 1
	default:
		return 0
	}
}
