package proxies

import (
	"crawlq/internal/mask"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Class is a proxy's kind; a job names the class it needs.
type Class string

// Proxy classes.
const (
	Datacenter  Class = "datacenter"
	Residential Class = "residential"
	Mobile      Class = "mobile"
)

// Proxy is one proxy endpoint. Its identity includes the credentials:
// gateway providers give many proxies on one host:port that differ only by
// username.
type Proxy struct {
	// ID is stable for the same scheme, host, port, user and password.
	ID       string `json:"id"`
	Scheme   string `json:"scheme"` // http, https or socks5
	Host     string `json:"host"`
	Port     string `json:"port"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Class    Class  `json:"class"`
	// Sites limits the proxy to these sites; empty means every site. In
	// partitioned mode each proxy serves exactly one site.
	Sites []string `json:"sites,omitempty"`
	// Gateway is set on a slot of a gateway (gateway.go).
	Gateway *Gateway `json:"gateway,omitempty"`
	// Exit says how the exit IP is learned; nil: the host is the exit.
	Exit *ExitSource `json:"exit,omitempty"`
	// Modem is set on a mobile proxy that can change its exit IP.
	Modem *Modem `json:"modem,omitempty"`
	// At is where the proxy was read (FILE:LINE of its list), for
	// errors; not stored in the pool.
	At string `json:"-"`
}

// Valid reports whether c is one of the known classes.
func (c Class) Valid() bool {
	return c == Datacenter || c == Residential || c == Mobile
}

// ParseClass turns a name into a Class; empty means Datacenter.
func ParseClass(s string) (Class, error) {
	if s == "" {
		return Datacenter, nil
	}
	c := Class(strings.ToLower(strings.TrimSpace(s)))
	if !c.Valid() {
		return "", fmt.Errorf("unknown proxy class %q (want datacenter, residential or mobile)", s)
	}
	return c, nil
}

// URL is the proxy address with its credentials, for dialing. Never print
// it: use Masked.
func (p Proxy) URL() *url.URL {
	u := &url.URL{Scheme: p.Scheme, Host: net.JoinHostPort(p.Host, p.Port)}
	switch {
	case p.Password != "":
		u.User = url.UserPassword(p.User, p.Password)
	case p.User != "":
		u.User = url.User(p.User)
	}
	return u
}

// Masked is the proxy address safe to print (mask.URL):
// scheme://user:***@host:port, the user name as written.
func (p Proxy) Masked() string { return mask.URL(p.URL().String()) }

// String is Masked, so %v never leaks a password.
func (p Proxy) String() string { return p.Masked() }

// GoString is Masked too, so %#v never leaks a password either.
func (p Proxy) GoString() string { return "proxies.Proxy(" + p.Masked() + ")" }

// AllowedOn reports whether the proxy may serve site (empty Sites: every site).
func (p Proxy) AllowedOn(site string) bool {
	return len(p.Sites) == 0 || slices.Contains(p.Sites, site)
}

// canonical is scheme://user:pass@host:port, the input of the ID.
func (p Proxy) canonical() string { return p.URL().String() }

// computeID is a short hex of sha256 of the canonical URL with credentials.
func computeID(p Proxy) string {
	sum := sha256.Sum256([]byte(p.canonical()))
	return hex.EncodeToString(sum[:8])
}
