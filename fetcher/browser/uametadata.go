package browser

import (
	"regexp"
	"strings"

	"github.com/chromedp/cdproto/emulation"

	"crawlq/fetcher"
)

var brandRe = regexp.MustCompile(`"([^"]+)";v="([^"]+)"`)

// uaMetadata is the client hints of the built-in profile whose
// User-Agent is ua, so that Chromium, told to claim ua, sends the
// sec-ch-ua headers that browser sends (an override without them sends
// none, which no Chrome does); nil for a UA of no Chrome profile
// (Firefox sends no client hints).
func uaMetadata(ua string) *emulation.UserAgentMetadata {
	for _, p := range fetcher.Profiles() {
		if p.UserAgent != ua || p.SecCHUA == "" {
			continue
		}
		md := &emulation.UserAgentMetadata{Platform: strings.Trim(p.SecCHUAPlatform, `"`),
			Mobile: p.SecCHUAMobile == "?1", Architecture: "x86", Bitness: "64"}
		for _, m := range brandRe.FindAllStringSubmatch(p.SecCHUA, -1) {
			md.Brands = append(md.Brands, &emulation.UserAgentBrandVersion{Brand: m[1], Version: m[2]})
		}
		return md
	}
	return nil
}
