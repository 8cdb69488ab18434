package testbed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// HelloCapture is a CONNECT proxy that never reaches a site: it accepts
// every tunnel, reads the client's TLS ClientHello from it and hangs up.
// Point a browser or a client at it to learn its JA4.
type HelloCapture struct {
	ln     net.Listener
	hellos chan CapturedHello
	wg     sync.WaitGroup
}

// CapturedHello is one ClientHello read by a HelloCapture.
type CapturedHello struct {
	// Host is the CONNECT target (host:port).
	Host string
	// Raw are the handshake record bytes holding the ClientHello.
	Raw []byte
	// Hello is Raw parsed.
	Hello ClientHello
}

// StartHelloCapture listens on a free 127.0.0.1 port.
func StartHelloCapture() (*HelloCapture, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("hello capture listen: %w", err)
	}
	c := &HelloCapture{ln: ln, hellos: make(chan CapturedHello, 64)}
	c.wg.Go(c.accept)
	return c, nil
}

// Addr is the proxy's host:port.
func (c *HelloCapture) Addr() string { return c.ln.Addr().String() }

// URL is the proxy's http:// URL.
func (c *HelloCapture) URL() string { return "http://" + c.Addr() }

// Next waits for the next captured ClientHello or the end of ctx.
func (c *HelloCapture) Next(ctx context.Context) (CapturedHello, error) {
	select {
	case h := <-c.hellos:
		return h, nil
	case <-ctx.Done():
		return CapturedHello{}, fmt.Errorf("no client hello captured: %w", ctx.Err())
	}
}

// Close stops listening and waits for open tunnels to end.
func (c *HelloCapture) Close() {
	c.ln.Close()
	c.wg.Wait()
}

func (c *HelloCapture) accept() {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.wg.Go(func() { c.serve(conn) })
	}
}

// serve answers one CONNECT and reads the ClientHello through it; a
// client that sends none (a browser's preconnect it drops) is let go.
func (c *HelloCapture) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		io.WriteString(conn, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	io.WriteString(conn, "HTTP/1.1 200 Connection Established\r\n\r\n")
	raw, err := ReadHelloRecords(br)
	if err != nil {
		return
	}
	h, err := ParseClientHello(raw)
	if err != nil {
		return
	}
	select {
	case c.hellos <- CapturedHello{Host: req.Host, Raw: raw, Hello: h}:
	default: // nobody is reading; drop
	}
}

// ReadHelloRecords reads TLS handshake records from r until they hold a
// whole first handshake message, and returns those records' bytes.
func ReadHelloRecords(r io.Reader) ([]byte, error) {
	var raw, msg []byte
	for {
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(r, hdr); err != nil {
			return nil, fmt.Errorf("read tls record: %w", err)
		}
		if hdr[0] != 0x16 {
			return nil, errors.New("not a tls handshake record")
		}
		body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("read tls record: %w", err)
		}
		raw, msg = append(append(raw, hdr...), body...), append(msg, body...)
		if len(msg) >= 4 && len(msg) >= 4+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) {
			return raw, nil
		}
	}
}
