package testbed

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"

	"golang.org/x/net/http2/hpack"
)

// h2Preface is the HTTP/2 client connection preface.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// HTTP/2 frame types the fingerprint reads.
const (
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameSettings     = 0x4
	frameWindowUpdate = 0x8
	frameContinuation = 0x9
)

// H2Fingerprint is how a client opened an HTTP/2 connection, in Akamai's
// form: SETTINGS (id:value in order) | connection WINDOW_UPDATE increment
// | PRIORITY frames before the first request | pseudo-header order of the
// first request (m, a, s, p).
type H2Fingerprint struct {
	Settings     []string
	WindowUpdate uint32
	Priorities   []string
	PseudoOrder  []string
	// HeaderOrder are the regular header names of the first request, in
	// the order sent (not part of the Akamai form).
	HeaderOrder []string
}

// String is the Akamai form, e.g.
// "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p".
func (f H2Fingerprint) String() string {
	prio := "0"
	if len(f.Priorities) > 0 {
		prio = strings.Join(f.Priorities, ",")
	}
	return fmt.Sprintf("%s|%d|%s|%s", strings.Join(f.Settings, ";"), f.WindowUpdate, prio, strings.Join(f.PseudoOrder, ","))
}

// h2Parser reads a client's first bytes on an HTTP/2 connection up to its
// first HEADERS block and fills a fingerprint.
type h2Parser struct {
	buf    []byte
	pos    int // bytes of buf already parsed
	fp     H2Fingerprint
	block  []byte // header block of the first request, across CONTINUATIONs
	done   bool
	failed bool
	http1  bool // the client spoke HTTP/1.x: no HTTP/2 fingerprint
}

// feed adds bytes read from the client; it returns true once the
// fingerprint is complete (or can never be).
func (p *h2Parser) feed(b []byte) bool {
	if p.done || p.failed || p.http1 {
		return true
	}
	p.buf = append(p.buf, b...)
	n := min(len(p.buf), len(h2Preface))
	if string(p.buf[:n]) != h2Preface[:n] {
		p.http1, p.buf = true, nil
		return true
	}
	if n < len(h2Preface) {
		return false
	}
	p.pos = max(p.pos, len(h2Preface))
	p.parseFrames()
	if len(p.buf) > 1<<20 { // no HEADERS in the first MiB: give up
		p.failed = true
	}
	return p.done || p.failed
}

// parseFrames walks the whole frames buffered and not parsed yet.
func (p *h2Parser) parseFrames() {
	for !p.done {
		rest := p.buf[p.pos:]
		if len(rest) < 9 {
			return
		}
		n := int(rest[0])<<16 | int(rest[1])<<8 | int(rest[2])
		if len(rest) < 9+n {
			return
		}
		typ, flags := rest[3], rest[4]
		stream := binary.BigEndian.Uint32(rest[5:9]) & 0x7fffffff
		p.pos += 9 + n
		p.frame(typ, flags, stream, rest[9:9+n])
	}
}

// frame takes one frame into the fingerprint.
func (p *h2Parser) frame(typ, flags byte, stream uint32, payload []byte) {
	switch typ {
	case frameSettings:
		if flags&0x1 == 0 { // not an ACK
			for i := 0; i+6 <= len(payload); i += 6 {
				p.fp.Settings = append(p.fp.Settings, fmt.Sprintf("%d:%d",
					binary.BigEndian.Uint16(payload[i:]), binary.BigEndian.Uint32(payload[i+2:])))
			}
		}
	case frameWindowUpdate:
		if stream == 0 && len(payload) >= 4 {
			p.fp.WindowUpdate = binary.BigEndian.Uint32(payload) & 0x7fffffff
		}
	case framePriority:
		if len(payload) >= 5 {
			dep := binary.BigEndian.Uint32(payload)
			p.fp.Priorities = append(p.fp.Priorities, fmt.Sprintf("%d:%d:%d:%d", stream, dep>>31, dep&0x7fffffff, int(payload[4])+1))
		}
	case frameHeaders:
		p.headers(flags, payload)
	case frameContinuation:
		p.block = append(p.block, payload...)
		if flags&0x4 != 0 {
			p.finish()
		}
	}
}

// headers takes the first HEADERS frame, padding and priority cut.
func (p *h2Parser) headers(flags byte, payload []byte) {
	if flags&0x8 != 0 && len(payload) > 0 { // PADDED
		pad := int(payload[0])
		payload = payload[1:]
		if pad > len(payload) {
			p.failed = true
			return
		}
		payload = payload[:len(payload)-pad]
	}
	if flags&0x20 != 0 && len(payload) >= 5 { // PRIORITY
		payload = payload[5:]
	}
	p.block = append(p.block, payload...)
	if flags&0x4 != 0 { // END_HEADERS
		p.finish()
	}
}

// finish decodes the first header block for its pseudo-header order.
func (p *h2Parser) finish() {
	p.done = true
	d := hpack.NewDecoder(65536, nil)
	fields, err := d.DecodeFull(p.block)
	if err != nil {
		p.failed = true
		return
	}
	for _, f := range fields {
		if f.IsPseudo() {
			p.fp.PseudoOrder = append(p.fp.PseudoOrder, f.Name[1:2])
		} else {
			p.fp.HeaderOrder = append(p.fp.HeaderOrder, f.Name)
		}
	}
	p.buf, p.block = nil, nil
}

// fingerprintedConn is a server-side TLS connection that reads the
// client's HTTP/2 fingerprint from the first plaintext bytes it passes on.
// It hides the *tls.Conn's ConnectionState on purpose: net/http serves
// HTTP/2 with prior knowledge only on a connection it takes for plaintext.
type fingerprintedConn struct {
	net.Conn // a *tls.Conn
	mu       sync.Mutex
	parser   h2Parser
	ended    bool
	state    *connFingerprint
}

var _ net.Conn = (*fingerprintedConn)(nil)

func (c *fingerprintedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return n, err
	}
	if (n > 0 && c.parser.feed(b[:n])) || (err != nil && c.endBroken()) {
		c.ended = true
		c.state.setH2(&c.parser)
	}
	return n, err
}

// endBroken marks a connection that ended before its first request.
func (c *fingerprintedConn) endBroken() bool {
	c.parser.failed = true
	return true
}
