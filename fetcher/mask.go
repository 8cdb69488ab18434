package fetcher

import (
	"net/url"

	"crawlq/internal/mask"
)

// printable is mask.URL of a proxy that may be nil (a direct request: "").
func printable(p *url.URL) string {
	if p == nil {
		return ""
	}
	return mask.URL(p.String())
}
