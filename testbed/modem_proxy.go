package testbed

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"time"
)

func (m *Modems) acceptLoop(md *modem) {
	defer m.wg.Done()
	for {
		c, err := md.ln.Accept()
		if err != nil {
			return
		}
		m.mu.Lock()
		if m.ctx.Err() != nil { // closing: Close has dropped the others
			m.mu.Unlock()
			c.Close()
			return
		}
		md.conns[c] = struct{}{}
		epoch := md.epoch
		m.wg.Add(1)
		m.mu.Unlock()
		go m.serve(md, c, epoch)
	}
}

// serve serves proxy requests on c, accepted in epoch, until c closes,
// a request is refused or the modem changes its IP.
func (m *Modems) serve(md *modem, c net.Conn, epoch uint64) {
	defer m.wg.Done()
	defer func() {
		c.Close()
		m.mu.Lock()
		delete(md.conns, c)
		m.mu.Unlock()
	}()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		rt, ok := m.admit(md, epoch, req.Host)
		if !ok {
			writeStatusLine(c, http.StatusBadGateway)
			return
		}
		if !m.authorized(req) {
			writeProxyAuthRequired(c)
			return
		}
		if req.Method == http.MethodConnect {
			m.connect(md, c, br, req, rt)
			return
		}
		if !forwardRequest(rt.ctx, c, req, rt.tr, func(error) {}, nil) {
			return
		}
	}
}

// modemRoute is how one admitted request leaves the modem: from exit,
// in the epoch whose context ends at the next change.
type modemRoute struct {
	exit  string
	epoch uint64
	ctx   context.Context
	tr    *http.Transport
}

// admit counts a request to target through md and routes it; false
// (recorded) when md is settling or changed since c was accepted.
func (m *Modems) admit(md *modem, epoch uint64, target string) (modemRoute, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	if now.Before(md.ready) {
		m.stats.WhileSettling = append(m.stats.WhileSettling, ModemSettlingRequest{Modem: md.name, At: now, Target: target})
		return modemRoute{}, false
	}
	if epoch != md.epoch {
		return modemRoute{}, false
	}
	m.stats.Requests[md.name]++
	return modemRoute{exit: md.exit, epoch: md.epoch, ctx: md.ctx, tr: md.tr}, true
}

// authorized checks Proxy-Authorization when the modems have
// credentials.
func (m *Modems) authorized(req *http.Request) bool {
	if m.cfg.User == "" {
		return true
	}
	user, pass, ok := proxyBasicAuth(req)
	if ok && user == m.cfg.User && pass == m.cfg.Password {
		return true
	}
	m.mu.Lock()
	m.stats.AuthRefused++
	m.mu.Unlock()
	return false
}

// connect opens a tunnel from the route's exit and pipes both ways
// until either side ends or the modem changes its IP.
func (m *Modems) connect(md *modem, c net.Conn, br *bufio.Reader, req *http.Request, rt modemRoute) {
	up, err := dialFromExit(rt.ctx, rt.exit, req.Host)
	if err != nil {
		writeStatusLine(c, http.StatusBadGateway)
		return
	}
	if !m.track(md, up, rt.epoch) {
		up.Close()
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		return
	}
	pipe(c, br, up)
	m.mu.Lock()
	delete(md.conns, up)
	m.mu.Unlock()
}

// track adds an upstream connection to md's, so the next change drops
// it; false when a change came first.
func (m *Modems) track(md *modem, c net.Conn, epoch uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if md.epoch != epoch {
		return false
	}
	md.conns[c] = struct{}{}
	return true
}

// exitTransport is a forwarding transport dialing from exit (a gateway's
// or a modem's).
func exitTransport(exit string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return dialFromExit(ctx, exit, addr)
		},
		DisableCompression: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second,
	}
}

// dialFromExit dials addr from the loopback address exit, loopback only.
func dialFromExit(ctx context.Context, exit, addr string) (net.Conn, error) {
	target, err := loopbackTarget(addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(exit)}, Timeout: 10 * time.Second}
	return d.DialContext(ctx, "tcp4", target)
}
