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

// h2Parser reads a client's bytes on an HTTP/2 connection: up to its
// first HEADERS block they fill a fingerprint; every header block (the
// first one too) becomes an H2Request, its fields in the order sent.
type h2Parser struct {
	buf      []byte
	pos      int // bytes of buf already parsed
	fp       H2Fingerprint
	block    []byte // header block being read, across CONTINUATIONs
	stream   uint32 // stream of block
	dec      *hpack.Decoder
	requests []H2Request // decoded, not yet taken
	done     bool        // the fingerprint is complete
	failed   bool
	http1    bool // the client spoke HTTP/1.x: no HTTP/2 fingerprint
}

// H2Request is one request's header block as the client sent it.
type H2Request struct {
	Stream uint32
	// Fields are the pseudo and regular header fields in wire order.
	Fields []hpack.HeaderField
}

// pseudo is the value of pseudo-header name (":path") in fields.
func pseudo(fields []hpack.HeaderField, name string) string {
	for _, f := range fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// feed adds bytes read from the client; it returns true once the
// fingerprint is complete (or can never be).
func (p *h2Parser) feed(b []byte) bool {
	if p.failed || p.http1 {
		return true
	}
	p.buf = append(p.buf, b...)
	if p.done {
		p.parseFrames()
		p.buf, p.pos = append([]byte(nil), p.buf[p.pos:]...), 0
		return true
	}
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
	if !p.done && len(p.buf) > 1<<20 { // no HEADERS in the first MiB: give up
		p.failed = true
	}
	if p.done { // keep only the unparsed tail
		p.buf, p.pos = append([]byte(nil), p.buf[p.pos:]...), 0
	}
	return p.done || p.failed
}

// parseFrames walks the whole frames buffered and not parsed yet.
func (p *h2Parser) parseFrames() {
	for !p.failed {
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
		if flags&0x1 == 0 && !p.done { // not an ACK
			for i := 0; i+6 <= len(payload); i += 6 {
				p.fp.Settings = append(p.fp.Settings, fmt.Sprintf("%d:%d",
					binary.BigEndian.Uint16(payload[i:]), binary.BigEndian.Uint32(payload[i+2:])))
			}
		}
	case frameWindowUpdate:
		if stream == 0 && len(payload) >= 4 && !p.done {
			p.fp.WindowUpdate = binary.BigEndian.Uint32(payload) & 0x7fffffff
		}
	case framePriority:
		if len(payload) >= 5 && !p.done {
			dep := binary.BigEndian.Uint32(payload)
			p.fp.Priorities = append(p.fp.Priorities, fmt.Sprintf("%d:%d:%d:%d", stream, dep>>31, dep&0x7fffffff, int(payload[4])+1))
		}
	case frameHeaders:
		p.stream = stream
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

// maxPending bounds the decoded requests nobody took.
const maxPending = 256

// finish decodes a header block (the first one also fills the
// fingerprint's pseudo-header and header order).
func (p *h2Parser) finish() {
	if p.dec == nil {
		p.dec = hpack.NewDecoder(65536, nil)
	}
	fields, err := p.dec.DecodeFull(p.block)
	p.block = nil
	if err != nil {
		p.failed = true
		return
	}
	if len(p.requests) == maxPending {
		p.requests = p.requests[1:]
	}
	p.requests = append(p.requests, H2Request{Stream: p.stream, Fields: fields})
	if p.done {
		return
	}
	p.done = true
	for _, f := range fields {
		if f.IsPseudo() {
			p.fp.PseudoOrder = append(p.fp.PseudoOrder, f.Name[1:2])
		} else {
			p.fp.HeaderOrder = append(p.fp.HeaderOrder, f.Name)
		}
	}
}

// take removes and returns the first decoded request for method and
// path (with its query), false if none was read.
func (p *h2Parser) take(method, path string) (H2Request, bool) {
	for i, r := range p.requests {
		if pseudo(r.Fields, ":method") == method && pseudo(r.Fields, ":path") == path {
			p.requests = append(p.requests[:i], p.requests[i+1:]...)
			return r, true
		}
	}
	return H2Request{}, false
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
		if n > 0 {
			c.parser.feed(b[:n]) // later requests' header blocks
		}
		return n, err
	}
	if (n > 0 && c.parser.feed(b[:n])) || (err != nil && c.endBroken()) {
		c.ended = true
		c.state.setH2(&c.parser)
	}
	return n, err
}

// take is the header block of the request for method and path on this
// connection, read before net/http saw it; false on HTTP/1.x.
func (c *fingerprintedConn) take(method, path string) (H2Request, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parser.take(method, path)
}

// endBroken marks a connection that ended before its first request.
func (c *fingerprintedConn) endBroken() bool {
	c.parser.failed = true
	return true
}
