package testbed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// GatewayConfig configures StartGateway: one proxy port in front of a
// pool of exit IPs, the way residential and mobile proxies are sold.
type GatewayConfig struct {
	// IP is the loopback address the gateway listens on. Default
	// 127.0.3.1.
	IP string
	// Exits is the number of exit IPs (at least 1), consecutive loopback
	// addresses from FirstExit (default 127.0.4.1).
	Exits     int
	FirstExit string
	// User and Password are the customer's credentials. The session id
	// rides in the username, in any of the spellings ParseGatewayUser
	// reads; a username without one gets a new exit per connection.
	User, Password string
	// StickyTTL is how long a session keeps its exit IP (default 10
	// minutes; a username's lifetime parameter overrides it); Idle ends a
	// session no request used for that long (default 60 s).
	StickyTTL, Idle time.Duration
	// Collisions is the share of new sessions put on an exit IP another
	// live session holds; the rest get a free exit while one is free.
	// Whatever its value, a session finds no free exit once every exit is
	// taken, and shares one (counted as a collision too).
	Collisions float64
	// RoundRobin draws exits in order instead of at random (the next free
	// one after the last drawn; Collisions still apply), so a test knows
	// which exit a new session gets.
	RoundRobin bool
	// ExitHeader, when set (e.g. "x-luminati-ip"), names a header that
	// tells the exit IP: on the CONNECT reply and on every forwarded
	// answer.
	ExitHeader string
	// Seed seeds the exit draw.
	Seed int64
	// Now is the gateway's clock for stickiness. Default time.Now.
	Now    func() time.Time
	Logger *zap.Logger
}

// GatewayStats is what a gateway did.
type GatewayStats struct {
	// Sessions counts sessions started (a session id's first use, or its
	// first use after it expired); Unsessioned the connections without a
	// session id.
	Sessions, Unsessioned int
	// Collisions counts sessions put on an exit IP another live session
	// held at that moment.
	Collisions int
	// Expired counts sessions that ended by TTL or idle time and were
	// used again (and so got a new draw).
	Expired int
	// Refused counts requests refused for bad credentials.
	Refused int
	// Exits is how many distinct exit IPs carried traffic.
	Exits int
}

// Gateway is a running gateway proxy (HTTP, with CONNECT).
type Gateway struct {
	cfg    GatewayConfig
	exits  []string
	ln     net.Listener
	log    *zap.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	rng      *rand.Rand
	next     int // RoundRobin's next exit index
	sessions map[string]*gatewaySession
	used     map[string]bool
	trs      map[string]*http.Transport
	conns    map[net.Conn]struct{}
	stats    GatewayStats
}

// gatewaySession is one provider session: its exit while it lives.
type gatewaySession struct {
	exit        string
	start, last time.Time
	ttl         time.Duration
	open        int // tunnels open through it: activity keeps it alive
}

// StartGateway starts a gateway; it stops when ctx ends or on Close.
func StartGateway(ctx context.Context, cfg GatewayConfig) (*Gateway, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	exits, err := loopbackIPs(cfg.FirstExit, cfg.Exits)
	if err != nil {
		return nil, fmt.Errorf("gateway exits: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.IP, "0"))
	if err != nil {
		return nil, fmt.Errorf("gateway listen on %s: %w", cfg.IP, err)
	}
	g := &Gateway{cfg: cfg, exits: exits, ln: ln, log: cfg.Logger,
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9a7e)),
		sessions: map[string]*gatewaySession{}, used: map[string]bool{},
		trs: map[string]*http.Transport{}, conns: map[net.Conn]struct{}{}}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(1)
	go g.acceptLoop()
	context.AfterFunc(ctx, g.Close)
	return g, nil
}

func (c *GatewayConfig) withDefaults() error {
	if c.Exits < 1 {
		return fmt.Errorf("gateway: exits = %d, want at least 1", c.Exits)
	}
	if c.Collisions < 0 || c.Collisions > 1 {
		return fmt.Errorf("gateway: collisions = %g, want 0..1", c.Collisions)
	}
	if c.IP == "" {
		c.IP = "127.0.3.1"
	}
	if c.FirstExit == "" {
		c.FirstExit = "127.0.4.1"
	}
	if c.StickyTTL <= 0 {
		c.StickyTTL = 10 * time.Minute
	}
	if c.Idle <= 0 {
		c.Idle = 60 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}

// Addr is the gateway's host:port.
func (g *Gateway) Addr() string { return g.ln.Addr().String() }

// URL is the proxy URL for a username (with its session id, if any).
func (g *Gateway) URL(user string) string {
	return "http://" + user + ":" + g.cfg.Password + "@" + g.Addr()
}

// ExitIPs are the gateway's exit addresses.
func (g *Gateway) ExitIPs() []string { return append([]string(nil), g.exits...) }

// ExitOf is the exit IP the session id has now; false when it has none
// live (never used, or expired).
func (g *Gateway) ExitOf(id string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[id]
	if !ok || g.expiredLocked(s, g.cfg.Now()) {
		return "", false
	}
	return s.exit, true
}

// Stats is what the gateway did so far.
func (g *Gateway) Stats() GatewayStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Exits = len(g.used)
	return st
}

// Close stops the gateway and waits for its connections.
func (g *Gateway) Close() {
	g.cancel()
	g.ln.Close()
	g.mu.Lock()
	for c := range g.conns {
		c.Close()
	}
	for _, tr := range g.trs {
		tr.CloseIdleConnections()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

func (g *Gateway) acceptLoop() {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		g.conns[c] = struct{}{}
		g.mu.Unlock()
		g.wg.Add(1)
		go g.serve(c)
	}
}

func (g *Gateway) serve(c net.Conn) {
	defer g.wg.Done()
	defer func() {
		c.Close()
		g.mu.Lock()
		delete(g.conns, c)
		g.mu.Unlock()
	}()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		id, ttl, ok := g.authorize(req)
		if !ok {
			writeProxyAuthRequired(c)
			return
		}
		if req.Method == http.MethodConnect {
			g.connect(c, br, req, id, ttl)
			return
		}
		if !g.forward(c, req, g.exitFor(id, ttl)) {
			return
		}
	}
}

// authorize checks the credentials and reads the session id (and its
// lifetime, 0 for the default) from the username.
func (g *Gateway) authorize(req *http.Request) (id string, ttl time.Duration, ok bool) {
	user, pass, ok := proxyBasicAuth(req)
	if ok {
		var base string
		base, id, ttl = ParseGatewayUser(user)
		ok = base == g.cfg.User && pass == g.cfg.Password
	}
	if !ok {
		g.mu.Lock()
		g.stats.Refused++
		g.mu.Unlock()
	}
	return id, ttl, ok
}

// exitFor is the exit of session id now, drawing one when it has none
// live; every connection without an id gets a new draw.
func (g *Gateway) exitFor(id string, ttl time.Duration) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.cfg.Now()
	if id == "" {
		g.stats.Unsessioned++
		return g.drawLocked(now, "")
	}
	s, ok := g.sessions[id]
	if ok && !g.expiredLocked(s, now) {
		s.last = now
		return s.exit
	}
	if ok {
		g.stats.Expired++
	}
	if ttl <= 0 {
		ttl = g.cfg.StickyTTL
	}
	g.stats.Sessions++
	s = &gatewaySession{exit: g.drawLocked(now, id), start: now, last: now, ttl: ttl}
	g.sessions[id] = s
	g.log.Debug("gateway session", zap.String("session", id), zap.String("exit", s.exit))
	return s.exit
}

func (g *Gateway) expiredLocked(s *gatewaySession, now time.Time) bool {
	if now.Sub(s.start) >= s.ttl {
		return true
	}
	return s.open == 0 && now.Sub(s.last) >= g.cfg.Idle
}

// drawLocked picks an exit for a new session: one held by another live
// session with probability Collisions, else a free one while any is.
func (g *Gateway) drawLocked(now time.Time, id string) string {
	held := map[string]bool{}
	for sid, s := range g.sessions {
		if sid != id && !g.expiredLocked(s, now) {
			held[s.exit] = true
		}
	}
	var free, taken []string
	for _, ip := range g.exits {
		if held[ip] {
			taken = append(taken, ip)
		} else {
			free = append(free, ip)
		}
	}
	pick := free
	if len(free) == 0 || len(taken) > 0 && g.rng.Float64() < g.cfg.Collisions {
		pick = taken
	}
	ip := g.pickLocked(pick)
	if held[ip] {
		g.stats.Collisions++
	}
	g.used[ip] = true
	return ip
}

// pickLocked picks one of ips: at random, or with RoundRobin the first
// at or after the next index in exit order.
func (g *Gateway) pickLocked(ips []string) string {
	if !g.cfg.RoundRobin {
		return ips[g.rng.IntN(len(ips))]
	}
	in := map[string]bool{}
	for _, ip := range ips {
		in[ip] = true
	}
	for i := range g.exits {
		k := (g.next + i) % len(g.exits)
		if in[g.exits[k]] {
			g.next = k + 1
			return g.exits[k]
		}
	}
	return ips[0]
}

// hold marks a tunnel open through session id (activity keeps the
// session alive) until the returned func is called.
func (g *Gateway) hold(id string) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[id]
	if !ok {
		return func() {}
	}
	s.open++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		s.open--
		s.last = g.cfg.Now()
	}
}

// connect opens a tunnel from the session's exit and pipes both ways.
func (g *Gateway) connect(c net.Conn, br *bufio.Reader, req *http.Request, id string, ttl time.Duration) {
	exit := g.exitFor(id, ttl)
	release := g.hold(id)
	defer release()
	up, err := dialFromExit(g.ctx, exit, req.Host)
	if err != nil {
		writeStatusLine(c, http.StatusBadGateway)
		return
	}
	head := "HTTP/1.1 200 Connection established\r\n"
	if g.cfg.ExitHeader != "" {
		head += g.cfg.ExitHeader + ": " + exit + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		up.Close()
		return
	}
	pipe(c, br, up)
}

// forward sends an absolute-form request from exit and copies the answer
// back (with the exit header, if set); false when c should close.
func (g *Gateway) forward(c net.Conn, req *http.Request, exit string) bool {
	return forwardRequest(g.ctx, c, req, g.transport(exit), func(error) {}, func(h http.Header) {
		if g.cfg.ExitHeader != "" {
			h.Set(g.cfg.ExitHeader, exit)
		}
	})
}

// transport is the forwarding transport of one exit IP.
func (g *Gateway) transport(exit string) *http.Transport {
	g.mu.Lock()
	defer g.mu.Unlock()
	tr, ok := g.trs[exit]
	if !ok {
		tr = exitTransport(exit)
		g.trs[exit] = tr
	}
	return tr
}
