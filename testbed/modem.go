package testbed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ErrNoSuchModem is returned for a modem name or index the node lacks.
var ErrNoSuchModem = errors.New("no such modem")

// ModemConfig configures StartModems: mobile modems as they are sold,
// one proxy host:port per modem with one exit IP at a time, and a
// change-IP link (modemchange.go) that gives the modem a new IP from
// its carrier's pool after a settle time.
type ModemConfig struct {
	// N is the number of modems (at least 1).
	N int
	// Exits is the size of the carrier's pool of exit IPs (more than N):
	// consecutive loopback addresses from FirstExit (default 127.0.6.1).
	// Default 4 × N.
	Exits     int
	FirstExit string
	// IP is modem 0's listening address; modem i listens on the i-th
	// loopback address after it. Default 127.0.5.1.
	IP string
	// MinInterval is the least time between two accepted changes of one
	// modem (the provider's limit); a change sooner is refused with 429
	// and Retry-After. Default 60 s.
	MinInterval time.Duration
	// Advertised is the interval the modems' lines (Line) tell crawlq,
	// when the provider's real one (MinInterval) differs. Default
	// MinInterval.
	Advertised time.Duration
	// WholeSeconds makes the provider keep each change's time in whole
	// seconds, rounded to the nearest (as a DATETIME column does), and
	// count MinInterval from that: a call up to 0.5 s after the interval
	// can still be refused.
	WholeSeconds bool
	// Settle is how long a modem is offline after a change before its new
	// IP works; it refuses proxy requests meanwhile. Default 10 s.
	Settle time.Duration
	// Key is the secret in the change link. Default "crawlq-modem-key".
	Key string
	// User and Password, when User is set, are required of every proxy
	// request (HTTP basic Proxy-Authorization).
	User, Password string
	// Reuse is the chance that a change hands the modem back an IP it
	// had before (the most recent one that is free, never the one it
	// just had), as carriers do; otherwise the new IP is drawn at random
	// from the free part of the pool. 0..1, default 0.
	Reuse float64
	// Seed seeds the draw.
	Seed int64
	// Now is the node's clock (change times, settling). Default time.Now;
	// in a Testbed, the testbed's clock.
	Now    func() time.Time
	Logger *zap.Logger
}

// Default modem limits, those of a provider whose change link works at
// most once a minute and whose new IP takes about ten seconds.
const (
	DefaultModemMinInterval = 60 * time.Second
	DefaultModemSettle      = 10 * time.Second
	DefaultModemKey         = "crawlq-modem-key"
)

// Modems is a running modem node: one proxy listener (HTTP, with
// CONNECT) per modem and one control listener for the change links.
type Modems struct {
	cfg    ModemConfig
	pool   []string
	modems []*modem
	byName map[string]*modem
	ctl    net.Listener
	srv    *http.Server
	log    *zap.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	rng   *rand.Rand
	stats ModemStats
	// hold is how long the next change call waits before the node
	// takes it (HoldNextChange).
	hold time.Duration
}

// modem is one modem's state. Every field but name and ln is guarded
// by Modems.mu.
type modem struct {
	name string
	ln   net.Listener
	// exit is the modem's IP: the one it has, or while settling the one
	// it will have at ready.
	exit  string
	ready time.Time
	// changed is the time of the last accepted change (zero: none).
	changed time.Time
	// had lists the IPs the modem had before exit, oldest first.
	had []string
	// next, when set, is the IP the next change hands out (NextExit).
	next string
	// epoch counts the changes; a connection belongs to the epoch it
	// was accepted in and is dropped when it ends.
	epoch  uint64
	conns  map[net.Conn]struct{}
	ctx    context.Context
	cancel context.CancelFunc
	tr     *http.Transport
}

// StartModems starts the modems and their control server; they stop
// when ctx ends or on Close.
func StartModems(ctx context.Context, cfg ModemConfig) (*Modems, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	pool, err := loopbackIPs(cfg.FirstExit, cfg.Exits)
	if err != nil {
		return nil, fmt.Errorf("modem exits: %w", err)
	}
	m := &Modems{cfg: cfg, pool: pool, byName: map[string]*modem{}, log: cfg.Logger,
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x30de)), stats: ModemStats{Requests: map[string]int{}}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if err := m.listen(); err != nil {
		m.Close()
		return nil, err
	}
	for _, md := range m.modems {
		m.wg.Add(1)
		go m.acceptLoop(md)
	}
	m.srv = &http.Server{Handler: m.controlHandler(), ReadHeaderTimeout: 10 * time.Second}
	m.wg.Add(1)
	go m.serveControl()
	context.AfterFunc(ctx, m.Close)
	return m, nil
}

func (c *ModemConfig) withDefaults() error {
	if c.N < 1 {
		return fmt.Errorf("modems: n = %d, want at least 1", c.N)
	}
	if c.Exits == 0 {
		c.Exits = 4 * c.N
	}
	if c.Exits <= c.N {
		return fmt.Errorf("modems: exits = %d, want more than n = %d", c.Exits, c.N)
	}
	if c.Reuse < 0 || c.Reuse > 1 {
		return fmt.Errorf("modems: reuse = %g, want 0..1", c.Reuse)
	}
	c.IP = cmp.Or(c.IP, "127.0.5.1")
	c.FirstExit = cmp.Or(c.FirstExit, "127.0.6.1")
	c.Key = cmp.Or(c.Key, DefaultModemKey)
	if c.MinInterval <= 0 {
		c.MinInterval = DefaultModemMinInterval
	}
	if c.Advertised <= 0 {
		c.Advertised = c.MinInterval
	}
	if c.Settle <= 0 {
		c.Settle = DefaultModemSettle
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}

// listen opens each modem's proxy listener and the control listener;
// modem i starts on pool IP i.
func (m *Modems) listen() error {
	ips, err := loopbackIPs(m.cfg.IP, m.cfg.N)
	if err != nil {
		return fmt.Errorf("modem listeners: %w", err)
	}
	for i, ip := range ips {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return fmt.Errorf("modem %d listen on %s: %w", i, ip, err)
		}
		md := &modem{name: "modem" + strconv.Itoa(i), ln: ln, exit: m.pool[i], conns: map[net.Conn]struct{}{}}
		md.ctx, md.cancel = context.WithCancel(m.ctx)
		md.tr = exitTransport(md.exit)
		m.modems = append(m.modems, md)
		m.byName[md.name] = md
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("modem control listen: %w", err)
	}
	m.ctl = ctl
	return nil
}

// Len is the number of modems.
func (m *Modems) Len() int { return len(m.modems) }

// Name is modem i's name in its change link ("modem0", …); "" outside
// the node.
func (m *Modems) Name(i int) string {
	if i < 0 || i >= len(m.modems) {
		return ""
	}
	return m.modems[i].name
}

// Addr is modem i's proxy host:port.
func (m *Modems) Addr(i int) string { return m.modems[i].ln.Addr().String() }

// URL is modem i's proxy URL, with the credentials when it has them.
func (m *Modems) URL(i int) string {
	if m.cfg.User == "" {
		return "http://" + m.Addr(i)
	}
	return "http://" + m.cfg.User + ":" + m.cfg.Password + "@" + m.Addr(i)
}

// ControlURL is the control server's base URL (http://127.0.0.1:PORT).
func (m *Modems) ControlURL() string { return "http://" + m.ctl.Addr().String() }

// ChangeURL is modem i's change link: GET or POST it to change the IP.
func (m *Modems) ChangeURL(i int) string {
	return m.ControlURL() + ChangeIPPath + m.cfg.Key + "/" + m.Name(i)
}

// Line is modem i's line of a crawlq proxy list: its URL, its change
// link, the provider's minimum interval (as advertised) and settle time, and how crawlq
// learns its exit (a probe of probeURL; of the worker's default probe
// when probeURL is "").
func (m *Modems) Line(i int, probeURL string) string {
	exit := "exit=probe"
	if probeURL != "" {
		exit += ":" + probeURL
	}
	return fmt.Sprintf("%s change=%s change_every=%s change_settle=%s %s", m.URL(i), m.ChangeURL(i),
		lineDuration(m.cfg.Advertised), lineDuration(m.cfg.Settle), exit)
}

// lineDuration writes d as whole seconds ("60s") when it is, else in
// Go's notation ("1.5s", "300ms").
func lineDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// ExitPool is the carrier's pool of exit IPs.
func (m *Modems) ExitPool() []string { return append([]string(nil), m.pool...) }

// Exit is modem i's exit IP now, and whether it is settling (offline,
// the IP the one it will have).
func (m *Modems) Exit(i int) (ip string, settling bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md := m.modems[i]
	return md.exit, m.cfg.Now().Before(md.ready)
}

// NextExit makes the next change of modem name hand out ip, if ip is
// then free and not the modem's current IP (else the change draws as
// usual): a test's way to bring a modem back to an IP it had.
func (m *Modems) NextExit(name, ip string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	md, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("modem %q: %w", name, ErrNoSuchModem)
	}
	for _, p := range m.pool {
		if p == ip {
			md.next = ip
			return nil
		}
	}
	return fmt.Errorf("modem %s: %s is not in the exit pool", name, ip)
}

// HoldNextChange makes the next change call, of any modem, wait d
// before the node takes it (and its MinInterval counts from then): a
// slow link or network, the caller's clock running ahead of the
// provider's.
func (m *Modems) HoldNextChange(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = d
}

// takeHold returns the hold set for the next change and clears it.
func (m *Modems) takeHold() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.hold
	m.hold = 0
	return d
}

// Close stops the modems and the control server and waits for their
// connections. It is safe to call more than once.
func (m *Modems) Close() {
	m.cancel()
	if m.srv != nil {
		m.srv.Close()
	} else if m.ctl != nil {
		m.ctl.Close()
	}
	m.mu.Lock()
	for _, md := range m.modems {
		md.ln.Close()
		for c := range md.conns {
			c.Close()
		}
		md.tr.CloseIdleConnections()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// startModems starts cfg.Modems, if set, on the testbed's clock and
// seed unless it names its own.
func (tb *Testbed) startModems(ctx context.Context, cfg Config) error {
	if cfg.Modems == nil {
		return nil
	}
	mc := *cfg.Modems
	if mc.Now == nil {
		mc.Now = cfg.Now
	}
	if mc.Seed == 0 {
		mc.Seed = cfg.Seed
	}
	if mc.Logger == nil {
		mc.Logger = cfg.Logger
	}
	m, err := StartModems(ctx, mc)
	if err != nil {
		return err
	}
	tb.Modems = m
	return nil
}

// ModemLine is modem i's line of a crawlq proxy list, its exit learned
// by a probe of the testbed's IP echo; "" without modems or for an i
// outside the node.
func (tb *Testbed) ModemLine(i int) string {
	if tb.Modems == nil || i < 0 || i >= tb.Modems.Len() {
		return ""
	}
	return tb.Modems.Line(i, tb.EchoURL())
}

// ModemLines are every modem's lines (nil without modems).
func (tb *Testbed) ModemLines() []string {
	if tb.Modems == nil {
		return nil
	}
	lines := make([]string, tb.Modems.Len())
	for i := range lines {
		lines[i] = tb.ModemLine(i)
	}
	return lines
}
