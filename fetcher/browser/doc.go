// Package browser is crawlq's browser tier: a headless Chromium, driven
// over the DevTools protocol (chromedp), that clears a site's JavaScript
// challenge for a session, or renders a page (fetcher.BrowserJob.Render). One process
// per worker; each Solve opens a browser context through the session's
// own proxy (proxy auth answered over CDP) with the session's User-Agent,
// language and cookies. A page loads what a browser loads, all through
// that proxy: a request to the site passes the session's gate (I1/I2), a
// request to another host (its CDN) goes at once, and the kinds skipped
// (Config.Skip: images, fonts, media by default) are refused. The browser
// does not announce automation (AutomationControlled off, new headless).
// The visit waits until the challenge has cleared (and the page has
// rendered) and returns the context's cookies for the session's jar.
package browser
