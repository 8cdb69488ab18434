// Package browser is crawlq's browser tier: a headless Chromium, driven
// over the DevTools protocol (chromedp), that clears a site's JavaScript
// challenge for a session. One process per worker; each Solve opens a
// browser context through the session's own proxy (proxy auth answered
// over CDP) with the session's User-Agent, language and cookies, lets each
// page or XHR request through only when the session's politeness allows
// (every other request is blocked), waits until the challenge has cleared,
// and returns the context's cookies for the session's jar.
package browser
