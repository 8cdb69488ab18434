package fetcher

import (
	"context"
	"crawlq/internal/mask"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ExitProbe learns the IP a site sees through a proxy before the site
// sees a request: a request to an IP-echo URL through the proxy, which
// answers the client IP as text or as {"ip": …}. With Header set (a
// provider's header such as x-luminati-ip) the header wins, read from the
// CONNECT reply of an https probe or from the answer.
type ExitProbe struct {
	// URL is the IP-echo URL.
	URL string
	// Header names the provider's exit-IP header; "" reads the body.
	Header string
	// Timeout bounds the probe. Default 10 s.
	Timeout time.Duration
	// TLS is the TLS configuration of an https echo URL (its CA in tests).
	TLS *tls.Config
}

// ErrExitUnknown means a probe's answer named no IP.
var ErrExitUnknown = errors.New("the probe's answer names no IP")

// Learn asks the echo URL through proxy and returns the exit IP. Errors
// never show the proxy's password.
func (p ExitProbe) Learn(ctx context.Context, proxy *url.URL) (string, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var told string
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: p.TLS, DisableKeepAlives: true,
		OnProxyConnectResponse: func(_ context.Context, _ *url.URL, _ *http.Request, r *http.Response) error {
			if p.Header != "" {
				told = r.Header.Get(p.Header)
			}
			return nil
		}}
	defer tr.CloseIdleConnections()
	ip, err := p.ask(ctx, tr, &told)
	if err != nil {
		pw, _ := proxy.User.Password()
		return "", fmt.Errorf("exit probe through %s: %w", printable(proxy), mask.Err(err, pw))
	}
	return ip, nil
}

func (p ExitProbe) ask(ctx context.Context, tr *http.Transport, told *string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("echo answered %d", resp.StatusCode)
	}
	if *told == "" && p.Header != "" {
		*told = resp.Header.Get(p.Header)
	}
	if *told != "" {
		return validIP(*told)
	}
	return validIP(echoedIP(body))
}

// echoedIP reads an echo answer: {"ip": …} or the IP as text.
func echoedIP(body []byte) string {
	var j struct {
		IP string `json:"ip"`
	}
	if json.Unmarshal(body, &j) == nil && j.IP != "" {
		return j.IP
	}
	return strings.TrimSpace(string(body))
}

func validIP(s string) (string, error) {
	ip := net.ParseIP(strings.TrimSpace(s))
	if ip == nil {
		return "", fmt.Errorf("%w: %.40q", ErrExitUnknown, s)
	}
	return ip.String(), nil
}
