package proxies

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// LineError is one bad line of a proxy list: FILE:LINE: reason.
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// ErrBadLine is wrapped by every *LineError.
var ErrBadLine = errors.New("bad proxy line")

// Unwrap lets errors.Is match ErrBadLine.
func (e *LineError) Unwrap() error { return ErrBadLine }

// ParseFile reads a proxy list, one proxy a line, or a YAML list (a
// .yaml or .yml file, ParseYAML). Any bad line refuses the whole file:
// the error is a *LineError naming FILE:LINE.
func ParseFile(path string) ([]Proxy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		return ParseYAML(f, path)
	}
	return ParseReader(f, path)
}

// ParseReader reads a proxy list from r; name is used in errors. Blank lines
// and lines starting with # are skipped; duplicates are dropped. A line is
// a proxy (ParseLine) and its options, separated by spaces: a gateway
// (gateway.go) expands into its slots.
func ParseReader(r io.Reader, name string) ([]Proxy, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var out []Proxy
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps, err := parseEntry(lineEntry(line, n), name)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !seen[p.ID] {
				seen[p.ID] = true
				out = append(out, p)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// ParseLine parses one proxy in any supported format: host:port,
// user:pass@host:port, scheme://[user:pass@]host:port (http, https,
// socks5), host:port:user:pass; IPv6 hosts in brackets. Class is
// Datacenter; the ID is set. A proxy holds no space: in a list a space
// ends the proxy and starts its options, so a user name or password with
// one is written in the URL form as %20.
func ParseLine(line string) (Proxy, error) {
	s := strings.TrimSpace(line)
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return Proxy{}, fmt.Errorf("a space inside the proxy (options go after it in a list; a user name or password with a space needs the URL form with %%20)")
	}
	p, err := parseParts(s)
	if err != nil {
		return Proxy{}, err
	}
	if err := p.validate(); err != nil {
		return Proxy{}, err
	}
	p.Class = Datacenter
	p.ID = computeID(p)
	return p, nil
}

func parseParts(s string) (Proxy, error) {
	p := Proxy{Scheme: "http"}
	if i := strings.Index(s, "://"); i >= 0 {
		p.Scheme, s = strings.ToLower(s[:i]), strings.TrimSuffix(s[i+3:], "/")
		return withUserinfo(p, s, true)
	}
	if strings.Contains(s, "@") {
		return withUserinfo(p, s, false)
	}
	return hostPortUserPass(p, s)
}

// withUserinfo parses [user:pass@]host:port; escaped says the userinfo may
// be percent-encoded (URL form).
func withUserinfo(p Proxy, s string, escaped bool) (Proxy, error) {
	if i := strings.LastIndex(s, "@"); i >= 0 {
		user, pass, _ := strings.Cut(s[:i], ":")
		if escaped {
			var err error
			if user, err = url.PathUnescape(user); err != nil {
				return p, fmt.Errorf("bad escape in user name")
			}
			if pass, err = url.PathUnescape(pass); err != nil {
				return p, fmt.Errorf("bad escape in password")
			}
		}
		p.User, p.Password, s = user, pass, s[i+1:]
		if p.User == "" {
			return p, fmt.Errorf("empty user name before @")
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			// s may hold the rest of a password with an '@': never echo it.
			return p, fmt.Errorf("bad host:port after @ (want user:pass@host:port; a password with '@' needs the URL form with %%40)")
		}
	}
	return splitHostPort(p, s)
}

// hostPortUserPass parses host:port or host:port:user:pass.
func hostPortUserPass(p Proxy, s string) (Proxy, error) {
	hostEnd := 0
	if strings.HasPrefix(s, "[") {
		hostEnd = strings.Index(s, "]")
		if hostEnd < 0 {
			return p, fmt.Errorf("unclosed [ in IPv6 address")
		}
	}
	parts := strings.SplitN(s[hostEnd:], ":", 4)
	if hostEnd == 0 && len(parts) == 4 && !isPort(parts[1]) {
		return p, fmt.Errorf("IPv6 address must be in brackets: [addr]:port")
	}
	switch len(parts) {
	case 2:
		return splitHostPort(p, s)
	case 4:
		p.User, p.Password = parts[2], parts[3]
		if p.User == "" {
			return p, fmt.Errorf("empty user name in host:port:user:pass")
		}
		return splitHostPort(p, s[:hostEnd]+parts[0]+":"+parts[1])
	}
	return p, fmt.Errorf("want host:port, user:pass@host:port, scheme://user:pass@host:port or host:port:user:pass")
}

func splitHostPort(p Proxy, s string) (Proxy, error) {
	host, port, err := net.SplitHostPort(s)
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return p, fmt.Errorf("bad host:port %q: %s", s, ae.Err)
	}
	if err != nil {
		return p, fmt.Errorf("bad host:port %q: %v", s, err)
	}
	p.Host, p.Port = host, port
	return p, nil
}

func (p Proxy) validate() error {
	switch p.Scheme {
	case "http", "https", "socks5":
	default:
		return fmt.Errorf("unsupported scheme %q (want http, https or socks5)", p.Scheme)
	}
	if p.Host == "" {
		return fmt.Errorf("empty host")
	}
	if !validHost(p.Host) {
		return fmt.Errorf("bad host %q (want a host name or an IP address)", p.Host)
	}
	n, err := strconv.Atoi(p.Port)
	if err != nil || n < 1 || n > 65535 || strings.Trim(p.Port, "0123456789") != "" {
		return fmt.Errorf("bad port %q (want 1-65535)", p.Port)
	}
	return nil
}

// validHost accepts an IP address or a DNS name (letters, digits, '.',
// '-', '_'): a host like "#" or "h?x" would not survive the proxy's URL.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	for _, r := range h {
		ok := r == '.' || r == '-' || r == '_' || (r >= '0' && r <= '9') || (r|0x20 >= 'a' && r|0x20 <= 'z')
		if !ok {
			return false
		}
	}
	return true
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536
}
