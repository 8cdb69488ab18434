package proxies

import (
	"crawlq/internal/mask"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Modem defaults: providers allow one IP change a minute, and a modem
// takes about ten seconds to come back on its new IP.
const (
	DefaultModemEvery  = time.Minute
	DefaultModemSettle = 10 * time.Second
)

// Modem says how a mobile proxy changes its exit IP: it is sold per
// modem, one host:port with one exit IP at a time and a link that asks
// the carrier for a new one. A modem always learns its exit IP (Proxy.Exit
// is set): its host is not what the site sees.
type Modem struct {
	// ChangeURL is the provider's change-IP link (…/changeip/KEY/NAME). It
	// carries the key: print it with Masked, never as is.
	ChangeURL string `json:"change_url"`
	// Method is GET (the default) or POST.
	Method string `json:"change_method,omitempty"`
	// Every is the provider's least time between two changes of the modem.
	Every time.Duration `json:"change_every"`
	// Settle is how long the new IP takes to work after the change is
	// accepted: no request is sent through the modem before.
	Settle time.Duration `json:"change_settle"`
	// Timeout bounds the wait for a new IP after Settle; 0 means
	// DefaultModemTimeout(Settle).
	Timeout time.Duration `json:"change_timeout,omitempty"`
}

// NewIPTimeout is how long after the change is accepted a new IP may take
// before the change counts as failed: Timeout, else three times Settle
// and at least 30 s.
func (m Modem) NewIPTimeout() time.Duration {
	if m.Timeout > 0 {
		return m.Settle + m.Timeout
	}
	return max(3*m.Settle, 30*time.Second)
}

// Masked is the modem's change link safe to print (mask.URL): its key,
// in the path or the query, is ***.
func (m Modem) Masked() string { return mask.URL(m.ChangeURL) }

// String is Masked, so %v never leaks the change key.
func (m Modem) String() string { return m.Method + " " + m.Masked() }

// GoString is String too, so %#v never leaks it either.
func (m Modem) GoString() string { return "proxies.Modem(" + m.String() + ")" }

// Rotates says whether the proxy can change its exit IP on demand.
func (p Proxy) Rotates() bool { return p.Modem != nil }

// modemOption reads one change_* option into m (created on first use);
// false when k is not a modem option.
func modemOption(m **Modem, k, v string) (bool, error) {
	if !strings.HasPrefix(k, "change") {
		return false, nil
	}
	if *m == nil {
		*m = &Modem{Method: "GET", Every: DefaultModemEvery, Settle: DefaultModemSettle}
	}
	var err error
	switch k {
	case "change":
		(*m).ChangeURL, err = changeURL(v)
	case "change_method":
		(*m).Method = strings.ToUpper(v)
		if (*m).Method != "GET" && (*m).Method != "POST" {
			err = fmt.Errorf("want GET or POST, got %q", v)
		}
	case "change_every":
		(*m).Every, err = positiveDuration(v)
	case "change_settle":
		(*m).Settle, err = nonNegativeDuration(v)
	case "change_timeout":
		(*m).Timeout, err = positiveDuration(v)
	default:
		return false, nil
	}
	return true, err
}

// changeURL checks a change link: http(s) with a host. The error never
// repeats the link, which holds the provider's key.
func changeURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http(s)://host/path link, got %s", mask.URL(v))
	}
	return v, nil
}

func nonNegativeDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration like 10s, got %q", v)
	}
	return d, nil
}

// checkModem completes a modem's options: it needs its link, is not a
// gateway, and learns its exit IP (by a probe unless told how).
func checkModem(m *Modem, gw *Gateway, exit **ExitSource) error {
	if m == nil {
		return nil
	}
	if m.ChangeURL == "" {
		return fmt.Errorf("change_every, change_settle, change_method and change_timeout need change=URL (the modem's change-IP link)")
	}
	if gw != nil {
		return fmt.Errorf("a modem (change=URL) is one exit at a time, not a gateway: drop sessions/ttl/idle/rotating or change")
	}
	if *exit == nil {
		*exit = &ExitSource{}
	}
	return nil
}
