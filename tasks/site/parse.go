package site

import (
	"bytes"
	"fmt"
	"time"
	"unicode/utf8"
)

// MaxBody is the largest body Parse accepts (real pages are under 3 MB).
const MaxBody = 32 << 20

// Parse parses a body of the named kind. It never panics: a body that is
// too large, compressed, not UTF-8 or malformed gives a *ParseError
// wrapping ErrBadBody, one without the expected structure a *ParseError
// wrapping ErrUnrecognized.
func (s *Site) Parse(kind string, body []byte, pageURL string, fetchedAt time.Time) (p Page, err error) {
	k, err := s.Kind(kind)
	if err != nil {
		return Page{}, err
	}
	wrap := func(e error) error { return &ParseError{Site: s.Name, Kind: kind, URL: pageURL, Err: e} }
	if e := checkBody(body); e != nil {
		return Page{}, wrap(e)
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = Page{}, wrap(BadBody("parser panicked: %v", r))
		}
	}()
	p, err = k.Parse(s, body, pageURL, fetchedAt)
	if err != nil {
		return Page{}, wrap(err)
	}
	p.Follow = dedupTargets(p.Follow)
	return p, nil
}

// checkBody rejects bodies no parser should see.
func checkBody(body []byte) error {
	switch {
	case len(body) == 0:
		return BadBody("empty body")
	case len(body) > MaxBody:
		return BadBody("body of %d bytes is over the %d limit", len(body), MaxBody)
	case bytes.HasPrefix(body, []byte{0x1f, 0x8b}):
		return BadBody("body is gzip-compressed; decompress it first")
	case !utf8.Valid(body):
		return BadBody("body is not valid UTF-8 (wrong encoding?)")
	}
	return nil
}

// IsJSON reports whether body looks like a JSON document rather than HTML.
func IsJSON(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func dedupTargets(ts []Target) []Target {
	seen := make(map[string]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		key := t.Kind + "\x00" + t.ID
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, t)
	}
	return out
}

// String shows a target for logs.
func (t Target) String() string { return fmt.Sprintf("%s:%s:%s", t.Site, t.Kind, t.ID) }
