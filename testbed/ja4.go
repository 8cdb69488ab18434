package testbed

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TLS extension numbers JA4 treats specially.
const (
	extSNI  = 0x0000
	extALPN = 0x0010
)

// ClientHello is what JA4 reads of a TLS ClientHello: every list in the
// order the client sent it, GREASE values included.
type ClientHello struct {
	// Versions are the supported_versions extension's values, or the
	// legacy version alone when the extension is absent.
	Versions []uint16
	// Ciphers are the offered cipher suites.
	Ciphers []uint16
	// Extensions are the extension types in wire order.
	Extensions []uint16
	// SigAlgs are the signature_algorithms extension's schemes.
	SigAlgs []uint16
	// ALPN are the offered application protocols.
	ALPN []string
	// SNI says whether a server_name extension was sent.
	SNI bool
}

// HelloFromInfo is the ClientHello Go's TLS server saw.
func HelloFromInfo(info *tls.ClientHelloInfo) ClientHello {
	h := ClientHello{
		Versions:   info.SupportedVersions,
		Ciphers:    info.CipherSuites,
		Extensions: info.Extensions,
		ALPN:       info.SupportedProtos,
		SNI:        slices.Contains(info.Extensions, extSNI),
	}
	for _, s := range info.SignatureSchemes {
		h.SigAlgs = append(h.SigAlgs, uint16(s))
	}
	return h
}

// isGREASE reports whether v is one of RFC 8701's GREASE values
// (0x0a0a, 0x1a1a, ... 0xfafa).
func isGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

func dropGREASE(vs []uint16) []uint16 {
	out := make([]uint16, 0, len(vs))
	for _, v := range vs {
		if !isGREASE(v) {
			out = append(out, v)
		}
	}
	return out
}

// JA4 is FoxIO's JA4 fingerprint of h over TCP:
// a_b_c = t<version><d|i><ciphers><extensions><alpn>_<hash of sorted
// ciphers>_<hash of sorted extensions (SNI and ALPN left out) and the
// signature algorithms in order>. GREASE values are ignored throughout.
func (h ClientHello) JA4() string {
	ciphers, exts := dropGREASE(h.Ciphers), dropGREASE(h.Extensions)
	sni := "i"
	if h.SNI {
		sni = "d"
	}
	a := fmt.Sprintf("t%s%s%02d%02d%s", ja4Version(h.Versions), sni,
		min(len(ciphers), 99), min(len(exts), 99), ja4ALPN(h.ALPN))
	return a + "_" + ja4Hash(sortedHex(ciphers)) + "_" + ja4Hash(ja4ExtensionsPart(exts, dropGREASE(h.SigAlgs)))
}

// ja4Version is the highest non-GREASE version as JA4 writes it.
func ja4Version(vs []uint16) string {
	var top uint16
	for _, v := range dropGREASE(vs) {
		top = max(top, v)
	}
	switch top {
	case tls.VersionTLS13:
		return "13"
	case tls.VersionTLS12:
		return "12"
	case tls.VersionTLS11:
		return "11"
	case tls.VersionTLS10:
		return "10"
	case 0x0300:
		return "s3"
	}
	return "00"
}

// ja4ALPN is the first and last character of the first ALPN value, "00"
// without one; a non-alphanumeric edge is written as the hex of its byte
// pair, as the spec says.
func ja4ALPN(protos []string) string {
	if len(protos) == 0 || protos[0] == "" {
		return "00"
	}
	p := protos[0]
	first, last := p[0], p[len(p)-1]
	if isAlnum(first) && isAlnum(last) {
		return string([]byte{first, last})
	}
	x := hex.EncodeToString([]byte{first, last})
	return x[:1] + x[len(x)-1:]
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ja4ExtensionsPart is the string JA4_c hashes.
func ja4ExtensionsPart(exts, sigAlgs []uint16) string {
	kept := make([]uint16, 0, len(exts))
	for _, e := range exts {
		if e != extSNI && e != extALPN {
			kept = append(kept, e)
		}
	}
	s := sortedHex(kept)
	if len(sigAlgs) > 0 {
		s += "_" + joinHex(sigAlgs)
	}
	return s
}

func sortedHex(vs []uint16) string {
	s := slices.Clone(vs)
	slices.Sort(s)
	return joinHex(s)
}

func joinHex(vs []uint16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%04x", v)
	}
	return strings.Join(parts, ",")
}

// ja4Hash is the first 12 hex digits of the SHA-256 of s; an empty list
// hashes to twelve zeros.
func ja4Hash(s string) string {
	if s == "" {
		return "000000000000"
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

// JA4SameBrowser reports whether two JA4 fingerprints are the same client
// build, one sent with SNI and one without (a URL with an IP address has
// no server_name, which removes one extension from the count): equal
// after the SNI flag and extension count are brought to "d" form.
func JA4SameBrowser(a, b string) bool { return withSNI(a) == withSNI(b) }

// withSNI rewrites an "i" (no SNI) JA4 as the "d" JA4 the same client
// sends to a host name.
func withSNI(ja4 string) string {
	if len(ja4) < 10 || ja4[3] != 'i' {
		return ja4
	}
	n, err := strconv.Atoi(ja4[6:8])
	if err != nil {
		return ja4
	}
	return fmt.Sprintf("%sd%s%02d%s", ja4[:3], ja4[4:6], min(n+1, 99), ja4[8:])
}

// errShortHello is a ClientHello cut before its end.
var errShortHello = errors.New("client hello is cut short")

// ParseClientHello reads the ClientHello from raw, the first bytes a TLS
// client sends (its handshake records); the ClientHello may span records.
func ParseClientHello(raw []byte) (ClientHello, error) {
	msg, err := handshakeBytes(raw)
	if err != nil {
		return ClientHello{}, err
	}
	if len(msg) < 4 || msg[0] != 1 {
		return ClientHello{}, errors.New("first handshake message is not a client hello")
	}
	n := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
	if len(msg) < 4+n {
		return ClientHello{}, errShortHello
	}
	return parseHelloBody(&reader{b: msg[4 : 4+n]})
}

// handshakeBytes joins the handshake records' payloads at the start of raw.
func handshakeBytes(raw []byte) ([]byte, error) {
	var out []byte
	for len(raw) >= 5 && raw[0] == 0x16 {
		n := int(raw[3])<<8 | int(raw[4])
		if len(raw) < 5+n {
			out = append(out, raw[5:]...)
			break
		}
		out = append(out, raw[5:5+n]...)
		raw = raw[5+n:]
	}
	if out == nil {
		return nil, errors.New("not a tls handshake record")
	}
	return out, nil
}

func parseHelloBody(r *reader) (ClientHello, error) {
	var h ClientHello
	legacy := r.u16()
	r.skip(32)          // random
	r.skip(int(r.u8())) // session id
	h.Ciphers = r.u16s(int(r.u16()))
	r.skip(int(r.u8())) // compression methods
	if r.err != nil {
		return h, r.err
	}
	exts := &reader{b: r.bytes(int(r.u16()))}
	for exts.err == nil && len(exts.b) > 0 {
		typ, data := exts.u16(), exts.bytes(int(exts.u16()))
		h.Extensions = append(h.Extensions, typ)
		h.readExtension(typ, &reader{b: data})
	}
	if len(h.Versions) == 0 {
		h.Versions = []uint16{legacy}
	}
	return h, cmpErr(r.err, exts.err)
}

// readExtension keeps what JA4 needs of one extension.
func (h *ClientHello) readExtension(typ uint16, r *reader) {
	switch typ {
	case extSNI:
		h.SNI = true
	case extALPN:
		l := &reader{b: r.bytes(int(r.u16()))}
		for l.err == nil && len(l.b) > 0 {
			h.ALPN = append(h.ALPN, string(l.bytes(int(l.u8()))))
		}
	case 0x000d: // signature_algorithms
		h.SigAlgs = r.u16s(int(r.u16()))
	case 0x002b: // supported_versions
		h.Versions = r.u16s(int(r.u8()))
	}
}

func cmpErr(errs ...error) error { return errors.Join(errs...) }

// reader walks a byte slice; the first short read sets err and every
// later read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errShortHello
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) skip(n int) { r.bytes(n) }

func (r *reader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return 0
}

// u16s reads n bytes as big-endian uint16 values.
func (r *reader) u16s(n int) []uint16 {
	b := r.bytes(n)
	out := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		out = append(out, uint16(b[i])<<8|uint16(b[i+1]))
	}
	return out
}
