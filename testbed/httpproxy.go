package testbed

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"

	"go.uber.org/zap"
)

// hopHeaders are removed before a request is forwarded (RFC 9110 7.6.1).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization",
	"Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// serveHTTP serves HTTP proxy requests on c: absolute-form requests are
// forwarded, CONNECT opens a tunnel. Keep-alive is honoured.
func (n *farmNode) serveHTTP(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if !n.authorized(req) {
			writeProxyAuthRequired(c)
			return
		}
		if !n.delay() {
			return
		}
		if req.Method == http.MethodConnect {
			n.connect(c, br, req)
			return
		}
		if !n.forward(c, req) {
			return
		}
	}
}

// authorized checks Proxy-Authorization when the proxy has credentials.
func (n *farmNode) authorized(req *http.Request) bool {
	if n.spec.User == "" {
		return true
	}
	user, pass, ok := proxyBasicAuth(req)
	return ok && user == n.spec.User && pass == n.spec.Password
}

func writeProxyAuthRequired(c net.Conn) {
	io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\n"+
		"Proxy-Authenticate: Basic realm=\"crawlq-testbed\"\r\n"+
		"Content-Length: 0\r\nConnection: close\r\n\r\n")
}

// forward sends an absolute-form request on and copies the answer back;
// false when the client connection should close.
func (n *farmNode) forward(c net.Conn, req *http.Request) bool {
	return forwardRequest(n.ctx, c, req, n.tr, func(err error) {
		n.log.Debug("farm proxy upstream failed", zap.String("host", req.URL.Host), zap.Error(err))
	}, nil)
}

// forwardRequest sends req on through rt and copies the answer to c,
// after header, if set, has seen the answer's headers; failed hears an
// upstream failure. False when c should close.
func forwardRequest(ctx context.Context, c net.Conn, req *http.Request, rt http.RoundTripper, failed func(error), header func(http.Header)) bool {
	if !req.URL.IsAbs() {
		writeStatusLine(c, http.StatusBadRequest)
		return false
	}
	out := req.Clone(ctx)
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := rt.RoundTrip(out)
	if err != nil {
		failed(err)
		writeStatusLine(c, http.StatusBadGateway)
		return false
	}
	defer resp.Body.Close()
	if header != nil {
		header(resp.Header)
	}
	resp.Close = resp.Close || req.Close
	// buffered: Response.Write writes each header line on its own, a
	// syscall apiece on a bare conn
	bw := bufio.NewWriterSize(c, 16<<10)
	if err := resp.Write(bw); err != nil || bw.Flush() != nil {
		return false
	}
	return !resp.Close
}

// connect opens a tunnel to req.Host and pipes bytes both ways.
func (n *farmNode) connect(c net.Conn, br *bufio.Reader, req *http.Request) {
	up, err := n.dialLoopback(n.ctx, "tcp", req.Host)
	if err != nil {
		n.log.Debug("farm proxy connect failed", zap.String("host", req.Host), zap.Error(err))
		writeStatusLine(c, http.StatusBadGateway)
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		return
	}
	pipe(c, br, up)
}

// writeStatusLine writes a bodiless response with code and closes.
func writeStatusLine(c net.Conn, code int) {
	io.WriteString(c, "HTTP/1.1 "+strconv.Itoa(code)+" "+http.StatusText(code)+
		"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}
