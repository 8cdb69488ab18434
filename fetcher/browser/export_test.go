package browser

import "github.com/chromedp/cdproto/cdp"

// WrapPages makes b's pages talk to their targets through wrap.
func WrapPages(b *Browser, wrap func(cdp.Session) cdp.Session) { b.wrap = wrap }
