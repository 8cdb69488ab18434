package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// Proxy schemes a farm proxy speaks.
const (
	SchemeHTTP   = "http"
	SchemeSOCKS5 = "socks5"
)

// ErrNoSuchProxy is returned for a proxy index outside the farm.
var ErrNoSuchProxy = errors.New("no such farm proxy")

// FarmConfig configures StartFarm.
type FarmConfig struct {
	// N is the number of proxies (at least 1).
	N int
	// FirstIP is the address of proxy 0; proxy i listens on the i-th
	// loopback address after it (skipping .0 and .255). Default 127.0.0.2.
	FirstIP string
	// Auth makes every proxy require a username and password (HTTP basic
	// Proxy-Authorization, or SOCKS5 RFC 1929). Default: no auth.
	Auth bool
	// SOCKS5Every makes every k-th proxy (indexes k-1, 2k-1, …) a SOCKS5
	// proxy; 0 means all are HTTP proxies.
	SOCKS5Every int
	// Faults sets faults by proxy index at start; change them later with
	// Farm.SetFault.
	Faults map[int]Fault
	// Seed seeds the RNG of flaky proxies (per proxy: Seed+index). Default 0.
	Seed int64
	// Logger receives connection-level debug logs. Default: no logs.
	Logger *zap.Logger
}

// FarmProxy describes one farm proxy.
type FarmProxy struct {
	// Index is the proxy's position in the farm, from 0.
	Index int `json:"index"`
	// IP is the loopback address it listens on and dials out from: the
	// client IP the sites see.
	IP string `json:"ip"`
	// Port is its listening port.
	Port int `json:"port"`
	// URL is scheme://user:pass@ip:port (no userinfo without Auth).
	URL      string `json:"url"`
	Scheme   string `json:"scheme"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	// Fault is the proxy's fault when Proxies was called.
	Fault Fault `json:"fault"`
}

// Addr is the proxy's host:port.
func (p FarmProxy) Addr() string { return net.JoinHostPort(p.IP, strconv.Itoa(p.Port)) }

// Farm is a running set of loopback proxies.
type Farm struct {
	nodes []*farmNode
	log   *zap.Logger
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// StartFarm starts cfg.N proxies, each on its own loopback address. The
// farm stops when ctx ends or on Close.
func StartFarm(ctx context.Context, cfg FarmConfig) (*Farm, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("farm: n = %d, want at least 1", cfg.N)
	}
	ips, err := loopbackIPs(cfg.FirstIP, cfg.N)
	if err != nil {
		return nil, err
	}
	f := &Farm{log: cfg.Logger, stop: make(chan struct{})}
	if f.log == nil {
		f.log = zap.NewNop()
	}
	for i, ip := range ips {
		n := newFarmNode(farmSpec(cfg, i, ip), cfg.Seed+int64(i), f.log)
		f.nodes = append(f.nodes, n)
		if err := n.start(cfg.Faults[i]); err != nil {
			f.Close()
			return nil, err
		}
	}
	f.watch(ctx)
	f.log.Info("proxy farm started", zap.Int("proxies", cfg.N), zap.String("first_ip", ips[0]))
	return f, nil
}

// farmSpec builds the fixed part of proxy i's description.
func farmSpec(cfg FarmConfig, i int, ip string) FarmProxy {
	p := FarmProxy{Index: i, IP: ip, Scheme: SchemeHTTP}
	if cfg.SOCKS5Every > 0 && (i+1)%cfg.SOCKS5Every == 0 {
		p.Scheme = SchemeSOCKS5
	}
	if cfg.Auth {
		p.User = fmt.Sprintf("user%d", i)
		p.Password = fmt.Sprintf("pass%d-%d", i, cfg.Seed&0xffff)
	}
	return p
}

// watch closes the farm when ctx ends.
func (f *Farm) watch(ctx context.Context) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		select {
		case <-ctx.Done():
			f.closeNodes()
		case <-f.stop:
		}
	}()
}

// Proxies describes every proxy, in index order.
func (f *Farm) Proxies() []FarmProxy {
	out := make([]FarmProxy, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = n.describe()
	}
	return out
}

// Len is the number of proxies.
func (f *Farm) Len() int { return len(f.nodes) }

// Proxy describes proxy i.
func (f *Farm) Proxy(i int) (FarmProxy, error) {
	if i < 0 || i >= len(f.nodes) {
		return FarmProxy{}, fmt.Errorf("proxy %d: %w", i, ErrNoSuchProxy)
	}
	return f.nodes[i].describe(), nil
}

// SetFault changes proxy i's fault at run time: Dead closes its listener
// and open connections; clearing Dead listens again on the same port.
func (f *Farm) SetFault(i int, fault Fault) error {
	if i < 0 || i >= len(f.nodes) {
		return fmt.Errorf("proxy %d: %w", i, ErrNoSuchProxy)
	}
	return f.nodes[i].setFault(fault)
}

// WriteProxyFile writes one proxy a line as scheme://user:pass@host:port,
// the format `crawlq proxies import` reads.
func (f *Farm) WriteProxyFile(path string) error {
	var b strings.Builder
	for _, p := range f.Proxies() {
		b.WriteString(p.URL)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write proxy file: %w", err)
	}
	return nil
}

// Close stops every proxy and waits for their goroutines. It is safe to
// call more than once.
func (f *Farm) Close() {
	f.once.Do(func() { close(f.stop) })
	f.closeNodes()
	f.wg.Wait()
}

func (f *Farm) closeNodes() {
	for _, n := range f.nodes {
		n.close()
	}
}
