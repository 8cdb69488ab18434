package proxies

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"unicode"
)

// proxyLineSeeds are proxy lines of every supported format, plus near
// misses each format's parser must refuse.
var proxyLineSeeds = []string{
	"10.0.0.1:8080",
	"bob:s3cret@proxy.example:3128",
	"http://bob:pw@1.2.3.4:80",
	"https://1.2.3.4:443/",
	"socks5://u-1:p:w@gw.example:1080",
	"http://u%40x:p%23w@h:1",
	"gw.example:7000:cust-1:pw",
	"[2001:db8::1]:8080",
	"socks5://u:p@[::1]:1080",
	"[::1]:1080:u:p",
	"HTTP://h:1",
	"http://user0:pass0-3@127.0.0.2:41234",
	"  127.0.0.1:3128  ",
	"10.0.0.1",
	"h:99999",
	"ftp://h:21",
	"2001:db8::1:8080:1",
	"h:1:u",
	"@h:1",
	"http://u:%zz@h:1",
	"[::1:80",
	"http://@h:1",
	"h:0",
	"u:p@h",
	"",
}

// FuzzParseLine: ParseLine never panics; an accepted proxy is valid, its
// Masked form does not depend on the password, and both its URL and its
// Masked form parse back to the same endpoint (the URL to the same ID;
// the Masked form to the same user unless a word of it looked like a key).
// ParseReader agrees with ParseLine on a one-line list.
func FuzzParseLine(f *testing.F) {
	for _, s := range proxyLineSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		p, err := ParseLine(line)
		checkReaderAgrees(t, line, p, err)
		if err != nil {
			return
		}
		if err := p.validate(); err != nil || p.Class != Datacenter || len(p.ID) != 16 {
			t.Fatalf("ParseLine(%q) = %#v, invalid: %v", line, p, err)
		}
		checkMasked(t, p)
		back, err := ParseLine(p.URL().String())
		if err != nil || back.ID != p.ID {
			t.Fatalf("ParseLine(%q): URL %s parses to ID %q, %v; want ID %q", line, p.Masked(), back.ID, err, p.ID)
		}
		m, err := ParseLine(p.Masked())
		if err != nil || m.Host != p.Host || m.Port != p.Port || m.Scheme != p.Scheme ||
			m.User != p.User && !strings.Contains(m.User, "***") {
			t.Fatalf("ParseLine(%q): Masked %q parses to %v, %v", line, p.Masked(), m, err)
		}
	})
}

// checkMasked: Masked, String, GoString and %v/%+v never depend on the
// password, and Masked shows the endpoint.
func checkMasked(t *testing.T, p Proxy) {
	t.Helper()
	if p.Password == "" {
		return
	}
	other := p
	other.Password = "other-" + p.Password
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if a, b := fmt.Sprintf(f, p), fmt.Sprintf(f, other); a != b {
			t.Fatalf("%s of a proxy depends on its password: %q vs %q", f, a, b)
		}
	}
	prefix, suffix := p.Scheme+"://", ":***@"+net.JoinHostPort(p.Host, p.Port)
	if m := p.Masked(); !strings.HasPrefix(m, prefix) || !strings.HasSuffix(m, suffix) {
		t.Fatalf("Masked() = %q, want %s…%s", m, prefix, suffix)
	}
}

// checkReaderAgrees parses line as a one-line list and compares.
func checkReaderAgrees(t *testing.T, line string, p Proxy, lineErr error) {
	t.Helper()
	if strings.ContainsAny(line, "\r\n") {
		return // several lines for the reader
	}
	if strings.IndexFunc(strings.TrimSpace(line), unicode.IsSpace) >= 0 {
		if lineErr == nil {
			t.Fatalf("ParseLine(%q) accepted a space inside the proxy, which a list reads as its options", line)
		}
		return // the reader reads what follows the space as options
	}
	ps, err := ParseReader(strings.NewReader(line), "list.txt")
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		if err != nil || len(ps) != 0 {
			t.Fatalf("ParseReader(%q) = %v, %v; want a skipped line", line, ps, err)
		}
	case lineErr != nil:
		var le *LineError
		if !errors.As(err, &le) || !errors.Is(err, ErrBadLine) || le.Line != 1 || le.File != "list.txt" {
			t.Fatalf("ParseReader(%q) error = %v; want a *LineError list.txt:1 (ParseLine: %v)", line, err, lineErr)
		}
	case err != nil || len(ps) != 1 || ps[0].ID != p.ID:
		t.Fatalf("ParseReader(%q) = %v, %v; ParseLine gave %v", line, ps, err, p)
	}
}

// FuzzParseLineSecret builds lines of every credentialed format from
// parts and checks that no error message ever repeats the password, and
// that an accepted line keeps user and password as given.
func FuzzParseLineSecret(f *testing.F) {
	f.Add(uint8(0), "http", "bob", "S3cr3t-proxy-PW", "127.0.0.2", "8080")
	f.Add(uint8(1), "", "bob", "S3cr3t-proxy-PW", "proxy.example", "99999")
	f.Add(uint8(2), "", "cust-1", "S3cr3t-proxy-PW", "gw.example", "x")
	f.Add(uint8(2), "", "", "S3cr3t-proxy-PW", "::1", "1080")
	f.Add(uint8(0), "ftp", "u", "S3cr3t-proxy-PW", "h", "21")
	f.Add(uint8(0), "socks5", "u", "S3cr3t%zzPW", "h", "1")
	f.Fuzz(func(t *testing.T, format uint8, scheme, user, pass, host, port string) {
		var line string
		switch format % 3 {
		case 0:
			line = scheme + "://" + user + ":" + pass + "@" + host + ":" + port
		case 1:
			line = user + ":" + pass + "@" + host + ":" + port
		default:
			line = host + ":" + port + ":" + user + ":" + pass
		}
		p, err := ParseLine(line)
		public := strings.Join([]string{scheme, user, host, port}, "\x00")
		secret := len(pass) >= 6 && strings.Count(line, pass) == 1 && !strings.Contains(public, pass)
		if err != nil {
			if secret && strings.Contains(err.Error(), pass) {
				t.Fatalf("ParseLine(%q) error repeats the password: %v", line, err)
			}
			return
		}
		if secret && strings.Contains(p.Masked(), pass) {
			t.Fatalf("ParseLine(%q).Masked() = %q shows the password", line, p.Masked())
		}
	})
}
