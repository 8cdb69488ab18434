package site

import (
	"context"
	"net/http"
)

// Solve clears a site's challenge over HTTP, in the job's session and
// without a browser, as the challenge page's script would (Avito's proof
// of work): it reads what the challenge left in the session, posts
// through it, and returns once the site has set its clearance. Its error
// names the step that failed.
type Solve func(ctx context.Context, s *Site, sess Session) error

// Session is the job's session as a Solve uses it: its proxy, cookies,
// profile and pacing.
type Session interface {
	// Cookie is the value of the session's cookie name for rawURL, "" if
	// it has none.
	Cookie(rawURL, name string) string
	// PostJSON posts body (JSON) to rawURL as the page's script does,
	// paced, and gives the answer's status and body.
	PostJSON(ctx context.Context, rawURL string, body []byte) (status int, answer []byte, err error)
	// SetCookie sets a cookie the page's script sets, for rawURL.
	SetCookie(rawURL string, c *http.Cookie)
}
