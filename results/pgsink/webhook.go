package pgsink

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"crawlq/internal/mask"
)

// checkWebhook refuses a webhook URL that is not http(s) with a host,
// saying what is wrong; the URL in the message is masked.
func checkWebhook(u string) error {
	if u == "" {
		return errors.New("webhook: required")
	}
	if u != strings.TrimSpace(u) {
		return fmt.Errorf("webhook %q: spaces around the URL", mask.URL(strings.TrimSpace(u)))
	}
	p, err := url.Parse(u)
	var ue *url.Error
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("webhook: not a URL: %v", ue.Err) // ue.Err names the wrong part, not the URL
	case err != nil:
		return errors.New("webhook: not a URL")
	case p.Scheme == "" && p.Host == "":
		return fmt.Errorf("webhook %q: no scheme, want http:// or https:// before it",
			strings.TrimPrefix(mask.URL("https://"+u), "https://"))
	case p.Scheme != "http" && p.Scheme != "https":
		masked := mask.URL(u)
		scheme, _, _ := strings.Cut(masked, "://")
		return fmt.Errorf("webhook %q: scheme %q, want http or https", masked, scheme)
	case p.Host == "":
		return fmt.Errorf("webhook %q: no host after %s://", mask.URL(u), p.Scheme)
	}
	return nil
}
