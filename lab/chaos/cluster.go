package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/internal/redisx"
	"crawlq/proxies"
	"crawlq/tasks"
	_ "crawlq/tasks/avito" // the three sites register themselves
	_ "crawlq/tasks/ozon"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
	"crawlq/testbed"
)

// cluster is everything a chaos run starts; close stops all of it.
type cluster struct {
	o       Options
	log     *zap.Logger
	dir     string
	queue   *redisServer
	broker  *redisServer
	tb      *testbed.Testbed
	reg     *site.Registry
	workers []*worker
	// brokerRDB reads the broker's Redis: pool stats.
	brokerRDB redis.UniversalClient
	// queueRDB reads the queue's Redis: the results stream (workers keep
	// sessions and results with the queue).
	queueRDB redis.UniversalClient
	pool     *proxies.RedisBroker
	insp     *asynq.Inspector
	client   *asynq.Client

	// topo is the Sentinel group or Cluster of Options.Topology.
	topo *topology

	// With Options.Postgres: the sink process, the run's database (its
	// name and URL) and a connection to the server (sink.go).
	sink    *worker
	pgAdmin *pgx.Conn
	pgName  string
	pgURL   string

	// poolName is the broker's pool; modemByID maps a modem's proxy id to
	// its index in the node; killedRotation is what kill_rotating saw
	// (modem.go).
	poolName       string
	modemByID      map[string]int
	killedRotation *KilledRotation
}

// startCluster starts the two Redis servers and the testbed, writes the
// worker config and imports the farm. On error it stops what it started.
func startCluster(ctx context.Context, o Options) (c *cluster, err error) {
	c = &cluster{o: o, log: o.Logger}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	if c.dir, err = os.MkdirTemp("", "crawlq-chaos-"); err != nil {
		return nil, fmt.Errorf("chaos dir: %w", err)
	}
	if err = c.startRedis(ctx); err != nil {
		return nil, err
	}
	if c.tb, err = testbed.Start(ctx, testbed.Config{Proxies: o.Proxies, Seed: o.Seed, Strict: true,
		Dir: c.dir, Farm: testbed.FarmConfig{Auth: true}, Sites: softBanRules(o),
		Modems: modemConfig(o)}); err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	cfg, err := c.writeConfig()
	if err != nil {
		return nil, err
	}
	loaded, err := tasks.LoadConfig(cfg)
	if err != nil {
		return nil, err
	}
	c.reg = loaded.Sites
	if err = c.connect(loaded); err != nil {
		return nil, err
	}
	c.workers = c.newWorkers(cfg)
	if err = c.startSinkDB(ctx); err != nil {
		return nil, err
	}
	if err = c.importFarm(ctx); err != nil {
		return nil, err
	}
	return c, c.importModems(ctx)
}

func (c *cluster) startRedis(ctx context.Context) error {
	if c.o.Topology != "" {
		return c.startTopology()
	}
	var err error
	if c.queue, err = newRedisServer("queue-redis", c.dir, true); err != nil {
		return err
	}
	if err = c.queue.start(ctx); err != nil {
		return err
	}
	if c.broker, err = newRedisServer("broker-redis", c.dir, true); err != nil {
		return err
	}
	return c.broker.start(ctx)
}

// writeConfig writes the testbed's own crawlq configuration (every site
// at its HTTPS listener with the CA trusted, Wildberries' basket hosts,
// the challenge cookies) with each site's min_interval above the
// testbed's rule as the built-in sites pace it.
func (c *cluster) writeConfig() (string, error) {
	raw := c.tb.CrawlqConfig()
	if c.tb.Modems != nil {
		n := strconv.Itoa(modemRotateAfter)
		if c.o.LearnVolume {
			n = "auto"
		}
		raw = withRotateAfter(raw, n)
	}
	if c.o.LearnPace {
		raw = withLearnedPace(raw)
	}
	path := filepath.Join(c.dir, "crawlq.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("write worker config: %w", err)
	}
	return path, nil
}

func (c *cluster) connect(loaded *tasks.Loaded) error {
	q, err := redisx.ParseURL(c.queueURL())
	if err != nil {
		return err
	}
	b, err := redisx.ParseURL(c.brokerURL())
	if err != nil {
		return err
	}
	c.insp = asynq.NewInspector(q.AsynqOpt())
	c.queueRDB = q.NewClient()
	c.client = asynq.NewClient(q.AsynqOpt())
	c.brokerRDB = b.NewClient()
	bcfg := loaded.BrokerConfig()
	bcfg.Logger = c.log
	c.poolName = bcfg.Pool
	c.pool = proxies.NewRedisBroker(c.brokerRDB, bcfg)
	return nil
}

// queueURL and brokerURL are the workers' --redis and --broker-redis.
func (c *cluster) queueURL() string {
	if c.topo != nil {
		return c.topo.url
	}
	return c.queue.URL()
}

func (c *cluster) brokerURL() string {
	if c.topo != nil {
		return c.topo.url
	}
	return c.broker.URL()
}

func (c *cluster) importFarm(ctx context.Context) error {
	ps, err := proxies.ParseFile(c.tb.ProxiesFile)
	if err != nil {
		return err
	}
	_, err = c.pool.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter})
	return err
}

func (c *cluster) newWorkers(cfg string) []*worker {
	spec := workerSpec{binary: c.o.Binary, queueURL: c.queueURL(), brokerURL: c.brokerURL(), config: cfg,
		dir: c.dir, concurrency: c.o.Concurrency, leaseTTL: c.o.LeaseTTL}
	out := make([]*worker, c.o.Workers)
	for i := range out {
		out[i] = &worker{id: fmt.Sprintf("w%d", i+1), spec: spec}
	}
	return out
}

// startWorkers starts every worker process.
func (c *cluster) startWorkers() error {
	if c.sink != nil {
		if err := c.sink.start(); err != nil {
			return err
		}
	}
	for _, w := range c.workers {
		if err := w.start(); err != nil {
			return err
		}
	}
	return nil
}

// stopWorkers stops every worker gracefully; unclean exits are returned.
func (c *cluster) stopWorkers() error {
	var errs []error
	for _, w := range c.workers {
		errs = append(errs, w.stop())
	}
	return errors.Join(errs...)
}

// close kills whatever still runs and removes the run directory (unless
// kept). It is safe on a half-started cluster.
func (c *cluster) close() {
	for _, w := range c.workers {
		w.kill9()
	}
	if c.sink != nil {
		c.sink.kill9()
	}
	c.dropSinkDB()
	if c.insp != nil {
		_ = c.insp.Close()
		_ = c.client.Close()
		_ = c.brokerRDB.Close()
		if c.queueRDB != nil {
			_ = c.queueRDB.Close()
		}
	}
	if c.tb != nil {
		c.tb.Close()
	}
	for _, r := range []*redisServer{c.queue, c.broker} {
		if r != nil {
			r.kill()
		}
	}
	if c.topo != nil {
		c.topo.stop()
	}
	if c.dir != "" && !c.o.KeepDir {
		os.RemoveAll(c.dir)
	}
}
