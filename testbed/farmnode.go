package testbed

import (
	"context"
	"crawlq/internal/backoff"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// farmNode is one farm proxy: its listener, fault, open connections and
// the dialer bound to its loopback address.
type farmNode struct {
	spec   FarmProxy
	log    *zap.Logger
	dialer *net.Dialer
	tr     *http.Transport
	ctx    context.Context // cancelled by close; bounds dials and sleeps
	cancel context.CancelFunc

	mu     sync.Mutex
	fault  Fault
	rng    *rand.Rand
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newFarmNode(spec FarmProxy, seed int64, log *zap.Logger) *farmNode {
	n := &farmNode{
		spec:   spec,
		log:    log.With(zap.Int("proxy", spec.Index), zap.String("ip", spec.IP)),
		dialer: &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(spec.IP)}, Timeout: 10 * time.Second},
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x7e57bed)),
		conns:  map[net.Conn]struct{}{},
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.tr = &http.Transport{
		DialContext:         n.dialLoopback,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	return n
}

// start listens (picking a port the first time) and applies fault.
func (n *farmNode) start(fault Fault) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.listenLocked(); err != nil {
		return err
	}
	n.spec.URL = n.urlLocked()
	return n.applyLocked(fault)
}

func (n *farmNode) listenLocked() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(n.spec.IP, strconv.Itoa(n.spec.Port)))
	if err != nil {
		return fmt.Errorf("farm proxy %d listen on %s: %w", n.spec.Index, n.spec.IP, err)
	}
	n.spec.Port = ln.Addr().(*net.TCPAddr).Port
	n.ln = ln
	n.wg.Add(1)
	go n.acceptLoop(ln)
	return nil
}

func (n *farmNode) urlLocked() string {
	u := url.URL{Scheme: n.spec.Scheme, Host: n.spec.Addr()}
	if n.spec.User != "" {
		u.User = url.UserPassword(n.spec.User, n.spec.Password)
	}
	return u.String()
}

// applyLocked switches to fault: dying closes the listener and the open
// connections; reviving listens again on the same port.
func (n *farmNode) applyLocked(fault Fault) error {
	n.fault = fault
	if n.closed {
		return nil
	}
	if fault.Dead && n.ln != nil {
		n.ln.Close()
		n.ln = nil
		n.closeConnsLocked()
	}
	if !fault.Dead && n.ln == nil {
		return n.listenLocked()
	}
	return nil
}

func (n *farmNode) setFault(fault Fault) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log.Debug("farm proxy fault", zap.Stringer("fault", fault))
	return n.applyLocked(fault)
}

func (n *farmNode) describe() FarmProxy {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.spec
	p.Fault = n.fault
	return p
}

// acceptLoop serves ln until it closes, dropping a Flaky share of
// connections.
func (n *farmNode) acceptLoop(ln net.Listener) {
	defer n.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !n.admit(c) {
			c.Close()
			continue
		}
		n.wg.Add(1)
		go n.serve(c)
	}
}

// admit tracks c unless the node is closing or the flaky draw drops it.
func (n *farmNode) admit(c net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.fault.Dead {
		return false
	}
	if n.fault.Flaky > 0 && n.rng.Float64() < n.fault.Flaky {
		n.log.Debug("farm proxy dropped a connection (flaky)")
		return false
	}
	n.conns[c] = struct{}{}
	return true
}

func (n *farmNode) serve(c net.Conn) {
	defer n.wg.Done()
	defer n.forget(c)
	if n.spec.Scheme == SchemeSOCKS5 {
		n.serveSOCKS5(c)
		return
	}
	n.serveHTTP(c)
}

func (n *farmNode) forget(c net.Conn) {
	c.Close()
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

func (n *farmNode) closeConnsLocked() {
	for c := range n.conns {
		c.Close()
	}
}

// delay waits out the Slow fault; false when the node closed meanwhile.
func (n *farmNode) delay() bool {
	n.mu.Lock()
	d := n.fault.Slow
	n.mu.Unlock()
	return d <= 0 || backoff.Sleep(n.ctx, d) == nil
}

// errNotLoopback refuses destinations outside 127.0.0.0/8: the farm never
// reaches the real network.
var errNotLoopback = errors.New("farm proxies only dial loopback addresses")

// dialLoopback dials addr from the node's own address, loopback only.
func (n *farmNode) dialLoopback(ctx context.Context, network, addr string) (net.Conn, error) {
	target, err := loopbackTarget(addr)
	if err != nil {
		return nil, err
	}
	return n.dialer.DialContext(ctx, "tcp4", target)
}

// loopbackTarget resolves addr by the farm's host table (the sites, the
// CDN, the basket hosts and the basket CDN's map host are all 127.0.0.1) and refuses any destination
// outside loopback.
func loopbackTarget(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "localhost" || host == CDNHost || host == UpstreamsHost || isBasketHost(host) {
		host = "127.0.0.1"
	}
	if !isLoopback(host) {
		return "", fmt.Errorf("dial %s: %w", addr, errNotLoopback)
	}
	return net.JoinHostPort(host, port), nil
}

// close stops the node for good and waits for its goroutines.
func (n *farmNode) close() {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		n.cancel()
		if n.ln != nil {
			n.ln.Close()
			n.ln = nil
		}
		n.closeConnsLocked()
	}
	n.mu.Unlock()
	n.wg.Wait()
	n.tr.CloseIdleConnections()
}
