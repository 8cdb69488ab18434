package proxies

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Proxy
	}{
		{"host port", "10.0.0.1:8080", Proxy{Scheme: "http", Host: "10.0.0.1", Port: "8080"}},
		{"user pass at", "bob:s3cret@proxy.example:3128", Proxy{Scheme: "http", Host: "proxy.example", Port: "3128", User: "bob", Password: "s3cret"}},
		{"http url", "http://bob:pw@1.2.3.4:80", Proxy{Scheme: "http", Host: "1.2.3.4", Port: "80", User: "bob", Password: "pw"}},
		{"https url no auth", "https://1.2.3.4:443/", Proxy{Scheme: "https", Host: "1.2.3.4", Port: "443"}},
		{"socks5 url", "socks5://u-1:p:w@gw.example:1080", Proxy{Scheme: "socks5", Host: "gw.example", Port: "1080", User: "u-1", Password: "p:w"}},
		{"percent escaped", "http://u%40x:p%23w@h:1", Proxy{Scheme: "http", Host: "h", Port: "1", User: "u@x", Password: "p#w"}},
		{"host port user pass", "gw.example:7000:cust-1:pw", Proxy{Scheme: "http", Host: "gw.example", Port: "7000", User: "cust-1", Password: "pw"}},
		{"ipv6", "[2001:db8::1]:8080", Proxy{Scheme: "http", Host: "2001:db8::1", Port: "8080"}},
		{"ipv6 with auth", "socks5://u:p@[::1]:1080", Proxy{Scheme: "socks5", Host: "::1", Port: "1080", User: "u", Password: "p"}},
		{"ipv6 host port user pass", "[::1]:1080:u:p", Proxy{Scheme: "http", Host: "::1", Port: "1080", User: "u", Password: "p"}},
		{"upper scheme", "HTTP://h:1", Proxy{Scheme: "http", Host: "h", Port: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLine(tt.line)
			if err != nil {
				t.Fatalf("ParseLine(%q): %v", tt.line, err)
			}
			tt.want.Class = Datacenter
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Proxy{}, "ID")); diff != "" {
				t.Errorf("ParseLine(%q) (-want +got):\n%s", tt.line, diff)
			}
			if len(got.ID) != 16 {
				t.Errorf("ID %q: want 16 hex chars", got.ID)
			}
		})
	}
}

func TestParseLineBad(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"no port", "10.0.0.1", "want host:port"},
		{"bad port", "h:99999", "bad port"},
		{"port not a number", "h:http", "bad port"},
		{"bad scheme", "ftp://h:21", "unsupported scheme"},
		{"unbracketed ipv6", "2001:db8::1:8080:1", "IPv6 address must be in brackets"},
		{"three parts", "h:1:u", "want host:port"},
		{"empty user", "@h:1", "empty user name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLine(tt.line)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseLine(%q) = %v, want error containing %q", tt.line, err, tt.want)
			}
		})
	}
}

func TestIDIncludesCredentials(t *testing.T) {
	a, _ := ParseLine("gw.example:7000:cust-1:pw")
	b, _ := ParseLine("gw.example:7000:cust-2:pw")
	c, _ := ParseLine("http://cust-1:pw@gw.example:7000")
	if a.ID == b.ID {
		t.Errorf("same ID %s for different users on one gateway", a.ID)
	}
	if a.ID != c.ID {
		t.Errorf("ID differs across formats of one proxy: %s vs %s", a.ID, c.ID)
	}
}

func TestMaskedNeverLeaksPassword(t *testing.T) {
	p, _ := ParseLine("socks5://bob:hunter2@h:1080")
	for _, s := range []string{p.Masked(), p.String(), fmt.Sprintf("%v %s %+v %#v", p, p, p, p)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("password leaked in %q", s)
		}
	}
	if got, want := p.Masked(), "socks5://bob:***@h:1080"; got != want {
		t.Errorf("Masked = %q, want %q", got, want)
	}
	if got, want := p.URL().String(), "socks5://bob:hunter2@h:1080"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}

func TestParseReader(t *testing.T) {
	in := "# provider A\n\n1.1.1.1:80\nu:p@2.2.2.2:81\n1.1.1.1:80\n"
	ps, err := ParseReader(strings.NewReader(in), "list.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("got %d proxies, want 2 (comment, blank and duplicate skipped)", len(ps))
	}
}

func TestParseReaderRefusesWholeFile(t *testing.T) {
	in := "1.1.1.1:80\n# ok\nbad line here\n2.2.2.2:80\n"
	ps, err := ParseReader(strings.NewReader(in), "list.txt")
	if ps != nil {
		t.Errorf("got %d proxies with a bad line, want none", len(ps))
	}
	var le *LineError
	if !errors.As(err, &le) || le.File != "list.txt" || le.Line != 3 || !errors.Is(err, ErrBadLine) {
		t.Fatalf("err = %v, want *LineError at list.txt:3", err)
	}
	if !strings.HasPrefix(err.Error(), "list.txt:3: ") {
		t.Errorf("err = %q, want FILE:LINE: reason", err)
	}
}
