package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/proxies"
	"crawlq/results/pgsink"
)

// MonitoringPath is where Asynq's web UI is mounted.
const MonitoringPath = "/monitoring"

// viewTimeout bounds one full read of the pool.
const viewTimeout = 2 * time.Minute

// DefaultListen is the address `crawlq web` listens on by default: loopback
// only, the one place the dashboard serves without auth unless told to.
const DefaultListen = "127.0.0.1:8080"

// Config configures the dashboard server.
type Config struct {
	// Redis is the Asynq queue's Redis. Required.
	Redis asynq.RedisConnOpt
	// Broker is the proxy broker whose pool the dashboard shows. Nil shows
	// an empty pool.
	Broker proxies.Broker
	// Auth is "USER:PASS" for HTTP basic auth in front of every path.
	// Empty means no auth: then Serve refuses a listener beyond loopback
	// unless InsecureNoAuth is set. Beyond loopback over plain HTTP, a
	// warning says the password crosses the network in clear text.
	Auth string
	// InsecureNoAuth lets the server listen beyond loopback without Auth,
	// for a dashboard behind a proxy of one's own that authenticates (a
	// warning is logged). Default false: such a listener is refused with
	// ErrNoAuth.
	InsecureNoAuth bool
	// TLSCert and TLSKey are the PEM files of the certificate (chain) and
	// its key: with both the server answers HTTPS only. Default: plain
	// HTTP. One without the other is ErrTLSPair; files that do not load
	// are ErrTLSLoad.
	TLSCert, TLSKey string
	// ReadOnly makes Asynq's UI view-only: every non-GET request under
	// /monitoring/ is refused.
	ReadOnly bool
	// PrometheusURL, if set, lets Asynq's UI draw time-series charts from
	// that Prometheus.
	PrometheusURL string
	// Logger defaults to a no-op logger.
	Logger *zap.Logger
	// Refresh is how often the pool page updates its numbers in place, and
	// how often the whole pool is read for the proxy table, the counters
	// and the charts (less often when one read takes more than a third of
	// it). Default 10s.
	Refresh time.Duration
	// History is how many success-rate samples are kept in memory.
	// Default 60 (ten minutes at the default Refresh).
	History int
	// Version is reported in crawlq_build_info; default the module version.
	Version string
	// MetricsPerProxy adds four series per (proxy, site) to /metrics
	// (crawlq_proxy_*): heavy, 400,000 series at 100,000 proxies on one
	// site. Default off: /metrics carries aggregates per site and class
	// only, a count flat in the pool size.
	MetricsPerProxy bool
	// Sections are extra parts of the pool page, shown after the built-in
	// ones.
	Sections []Section
	// Store is the sink's PostgreSQL (a pool): with it the pool page has
	// an item search, /items lists the matches and /item/{site}/{id} is an
	// item's page (price chart, observations, CSV). Nil: none of these.
	Store pgsink.Querier
}

// Server is the dashboard: an http.Handler plus the sampler loop that feeds
// the success-rate chart. Close it when done.
type Server struct {
	cfg     Config
	log     *zap.Logger
	insp    *asynq.Inspector
	mon     *asynqmon.HTTPHandler
	reg     *prometheus.Registry
	hist    *history
	views   *viewCache
	rdb     redis.UniversalClient // the queue's Redis, for the heartbeats
	tls     *tls.Config           // nil: plain HTTP
	handler http.Handler
}

// NewServer builds the dashboard. It fails for a missing Redis option, a
// malformed Auth or a TLS pair that does not load; it does not touch
// Redis yet.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Redis == nil {
		return nil, errors.New("web: config.Redis is required")
	}
	tlsCfg, err := loadTLS(cfg)
	if err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	s := &Server{cfg: cfg, log: cfg.Logger, hist: newHistory(cfg.History), tls: tlsCfg}
	s.views = &viewCache{build: s.buildView, timeout: viewTimeout, every: cfg.Refresh}
	rdb, ok := cfg.Redis.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return nil, errors.New("web: config.Redis does not make a go-redis client")
	}
	s.rdb = rdb
	s.insp = asynq.NewInspector(cfg.Redis)
	s.mon = asynqmon.New(asynqmon.Options{RootPath: MonitoringPath, RedisConnOpt: cfg.Redis,
		ReadOnly: cfg.ReadOnly, PrometheusAddress: cfg.PrometheusURL})
	s.reg = s.newRegistry()
	h, err := s.routes()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.handler = h
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 10 * time.Second
	}
	if cfg.History <= 0 {
		cfg.History = 60
	}
	return cfg
}

// routes mounts every page and wraps them in auth when configured; the
// health probes /healthz and /readyz (the queue's Redis answers) never
// ask for it.
func (s *Server) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveDashboard)
	mux.HandleFunc("GET /api/pool", s.servePoolJSON)
	mux.HandleFunc("GET /api/summary", s.serveSummaryJSON)
	mux.HandleFunc("GET /api/section/{id}", s.serveSection)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, ErrorLog: zap.NewStdLog(s.log)}))
	mux.Handle(MonitoringPath+"/", s.readOnlyGuard(s.mon))
	s.itemRoutes(mux)
	if s.cfg.Auth == "" {
		mountHealth(mux, []Check{RedisCheck(s.rdb)})
		return mux, nil
	}
	a, err := parseAuth(s.cfg.Auth)
	if err != nil {
		return nil, err
	}
	// The probes carry no credentials and learn nothing but "ok" or which
	// dependency failed (masked): they stay outside the auth.
	outer := http.NewServeMux()
	mountHealth(outer, []Check{RedisCheck(s.rdb)})
	outer.Handle("/", a.wrap(mux))
	return outer, nil
}

// readOnlyGuard refuses every method but GET and HEAD in read-only mode,
// on top of asynqmon's own check of its API.
func (s *Server) readOnlyGuard(next http.Handler) http.Handler {
	if !s.cfg.ReadOnly {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only mode: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the dashboard, API, metrics and Asynq's UI.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Registry is the dashboard's Prometheus registry (served at /metrics).
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Run listens on addr and serves until ctx ends, then shuts down
// gracefully. Beyond loopback it needs Auth or InsecureNoAuth (see Serve).
func (s *Server) Run(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listen %s: %w", addr, err)
	}
	if err := s.admit(l.Addr(), addr); err != nil {
		l.Close()
		return err
	}
	s.log.Info("web: dashboard up", zap.String("url", s.scheme()+"://"+l.Addr().String()+"/"),
		zap.Bool("auth", s.cfg.Auth != ""), zap.Bool("read_only", s.cfg.ReadOnly))
	return s.serve(ctx, l)
}

// Serve serves on l (HTTPS with TLSCert and TLSKey) until ctx ends,
// sampling the pool every Refresh for the success-rate chart; it closes
// l. A listener beyond loopback without Auth or InsecureNoAuth is closed
// at once and Serve returns ErrNoAuth.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if err := s.admit(l.Addr(), l.Addr().String()); err != nil {
		l.Close()
		return err
	}
	return s.serve(ctx, l)
}

// serve is Serve once the listener is admitted.
func (s *Server) serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(s.log), TLSConfig: s.tls}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.sampleLoop(ctx) }()
	errc := make(chan error, 1)
	go func() {
		if s.tls != nil {
			errc <- hs.ServeTLS(l, "", "")
			return
		}
		errc <- hs.Serve(l)
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = shutdown(hs, errc)
	}
	wg.Wait()
	return err
}

// shutdown drains open requests for up to 5 seconds.
func shutdown(hs *http.Server, errc <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close waits for a pool read under way and releases the Redis
// connections of the inspector and Asynq's UI.
func (s *Server) Close() error {
	s.views.wait()
	return errors.Join(s.insp.Close(), s.mon.Close(), s.rdb.Close())
}
