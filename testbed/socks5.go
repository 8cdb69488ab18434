package testbed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"

	"go.uber.org/zap"
)

// SOCKS5 protocol constants (RFC 1928, RFC 1929).
const (
	socksVersion     = 5
	socksNoAuth      = 0x00
	socksUserPass    = 0x02
	socksNoMethod    = 0xff
	socksCmdConnect  = 0x01
	socksAtypIPv4    = 0x01
	socksAtypDomain  = 0x03
	socksAtypIPv6    = 0x04
	socksOK          = 0x00
	socksNotAllowed  = 0x02
	socksHostUnreach = 0x04
	socksBadCommand  = 0x07
	socksBadAtyp     = 0x08
)

var errSOCKS = errors.New("socks5 protocol error")

// serveSOCKS5 runs one SOCKS5 session on c: greeting, optional
// username/password auth, one CONNECT, then a tunnel.
func (n *farmNode) serveSOCKS5(c net.Conn) {
	br := bufio.NewReader(c)
	if err := n.socksHandshake(c, br); err != nil {
		n.log.Debug("socks5 handshake failed", zap.Error(err))
		return
	}
	addr, code := readSOCKSRequest(br)
	if code != socksOK {
		writeSOCKSReply(c, code, nil)
		return
	}
	if !n.delay() {
		return
	}
	up, err := n.dialLoopback(n.ctx, "tcp", addr)
	if err != nil {
		code := byte(socksHostUnreach)
		if errors.Is(err, errNotLoopback) {
			code = socksNotAllowed
		}
		writeSOCKSReply(c, code, nil)
		return
	}
	if writeSOCKSReply(c, socksOK, up.LocalAddr().(*net.TCPAddr)) != nil {
		up.Close()
		return
	}
	pipe(c, br, up)
}

// socksHandshake negotiates the method and checks credentials.
func (n *farmNode) socksHandshake(c net.Conn, br *bufio.Reader) error {
	methods, err := readSOCKSGreeting(br)
	if err != nil {
		return err
	}
	want := byte(socksNoAuth)
	if n.spec.User != "" {
		want = socksUserPass
	}
	if !slices.Contains(methods, want) {
		c.Write([]byte{socksVersion, socksNoMethod})
		return errSOCKS
	}
	if _, err := c.Write([]byte{socksVersion, want}); err != nil {
		return err
	}
	if want == socksNoAuth {
		return nil
	}
	return n.socksAuth(c, br)
}

func readSOCKSGreeting(br *bufio.Reader) ([]byte, error) {
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return nil, err
	}
	if head[0] != socksVersion {
		return nil, errSOCKS
	}
	methods := make([]byte, head[1])
	_, err := io.ReadFull(br, methods)
	return methods, err
}

// socksAuth runs RFC 1929 username/password sub-negotiation.
func (n *farmNode) socksAuth(c net.Conn, br *bufio.Reader) error {
	ver, err := br.ReadByte()
	if err != nil || ver != 1 {
		return errSOCKS
	}
	user, err1 := readLenPrefixed(br)
	pass, err2 := readLenPrefixed(br)
	if err1 != nil || err2 != nil {
		return errSOCKS
	}
	if user != n.spec.User || pass != n.spec.Password {
		c.Write([]byte{1, 1})
		return errors.New("socks5 wrong credentials")
	}
	_, err = c.Write([]byte{1, 0})
	return err
}

func readLenPrefixed(br *bufio.Reader) (string, error) {
	l, err := br.ReadByte()
	if err != nil {
		return "", err
	}
	b := make([]byte, l)
	_, err = io.ReadFull(br, b)
	return string(b), err
}

// readSOCKSRequest reads a request and returns its host:port, or a reply
// code other than socksOK.
func readSOCKSRequest(br *bufio.Reader) (string, byte) {
	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || head[0] != socksVersion {
		return "", socksBadCommand
	}
	if head[1] != socksCmdConnect {
		return "", socksBadCommand
	}
	host, err := readSOCKSHost(br, head[3])
	if err != nil {
		return "", socksBadAtyp
	}
	var port [2]byte
	if _, err := io.ReadFull(br, port[:]); err != nil {
		return "", socksBadCommand
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), socksOK
}

func readSOCKSHost(br *bufio.Reader, atyp byte) (string, error) {
	switch atyp {
	case socksAtypIPv4, socksAtypIPv6:
		b := make([]byte, net.IPv4len)
		if atyp == socksAtypIPv6 {
			b = make([]byte, net.IPv6len)
		}
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		return net.IP(b).String(), nil
	case socksAtypDomain:
		return readLenPrefixed(br)
	}
	return "", errSOCKS
}

// writeSOCKSReply answers a request; bound may be nil on failure.
func writeSOCKSReply(c net.Conn, code byte, bound *net.TCPAddr) error {
	ip, port := net.IPv4zero.To4(), 0
	if bound != nil {
		ip, port = bound.IP.To4(), bound.Port
	}
	b := []byte{socksVersion, code, 0, socksAtypIPv4}
	b = append(b, ip...)
	b = binary.BigEndian.AppendUint16(b, uint16(port))
	_, err := c.Write(b)
	return err
}
