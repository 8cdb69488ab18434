package redisx

import (
	"crawlq/internal/mask"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Topology is how the Redis behind a URL is deployed.
type Topology string

// Topologies a URL can name.
const (
	// Single is one Redis server: redis://, rediss://.
	Single Topology = "single"
	// Sentinel is a master with replicas watched by sentinels, which name
	// the current master and fail over to a replica when it dies:
	// redis-sentinel://, rediss-sentinel://.
	Sentinel Topology = "sentinel"
	// Cluster is a Redis Cluster, keys spread over masters by hash slot:
	// redis-cluster://, rediss-cluster://.
	Cluster Topology = "cluster"
)

// URLSyntax is the accepted syntax, for error messages and flag help.
const URLSyntax = `redis://[[user]:password@]host:port[/db], ` +
	`redis-sentinel://[[user]:password@]host:26379[,host2:26379…]/MASTERNAME[/db][?sentinel_password=P], ` +
	`redis-cluster://[[user]:password@]host:7000[,host2:7001…], rediss… for TLS, or "embedded"`

// Target is a parsed Redis URL: where the Redis is and how to log in.
type Target struct {
	Topology Topology
	// TLS is set by the rediss… schemes.
	TLS bool
	// Addrs are host:port: the server, the sentinels, or the cluster's seed
	// nodes.
	Addrs []string
	// MasterName is the sentinels' name of the master (Sentinel only).
	MasterName string
	// DB is the database number (always 0 on a Cluster).
	DB int
	// Username and Password log in to the Redis servers (for Sentinel: the
	// master and replicas).
	Username, Password string
	// SentinelPassword logs in to the sentinels (Sentinel only; from the
	// sentinel_password query parameter).
	SentinelPassword string
	// PoolSize, if set, is the connection pool size of NewClient's client
	// (per node on a Cluster). Default go-redis's (10 per CPU).
	PoolSize int

	masked string
}

// URLError is a Redis URL that cannot be used; Part names what is wrong.
// It never holds the password.
type URLError struct {
	// URL is the URL with its passwords masked.
	URL string
	// Part is the part that is wrong: scheme, host, port, master name, db,
	// query.
	Part   string
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("redis url %s: %s: %s (want %s)", e.URL, e.Part, e.Reason, URLSyntax)
}

var schemes = map[string]struct {
	topo Topology
	tls  bool
}{
	"redis": {Single, false}, "rediss": {Single, true},
	"redis-sentinel": {Sentinel, false}, "rediss-sentinel": {Sentinel, true},
	"redis-cluster": {Cluster, false}, "rediss-cluster": {Cluster, true},
}

// ParseURL reads a Redis URL of any topology (URLSyntax). Errors are
// *URLError, naming the wrong part, with passwords masked.
func ParseURL(raw string) (*Target, error) {
	t := &Target{masked: mask.URL(raw)}
	fail := func(part, format string, a ...any) error {
		return &URLError{URL: t.masked, Part: part, Reason: fmt.Sprintf(format, a...)}
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fail("scheme", "no scheme:// at the start")
	}
	s, ok := schemes[strings.ToLower(scheme)]
	if !ok {
		return nil, fail("scheme", "unknown scheme %q", scheme)
	}
	t.Topology, t.TLS = s.topo, s.tls
	rest, query, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		if err := t.userinfo(authority[:i]); err != nil {
			return nil, fail("user info", "%v", err)
		}
		authority = authority[i+1:]
	}
	if err := t.hosts(authority); err != nil {
		return nil, err
	}
	if err := t.path(path); err != nil {
		return nil, err
	}
	return t, t.query(query)
}

func (t *Target) userinfo(s string) error {
	user, pass, hasPass := strings.Cut(s, ":")
	var err error
	if t.Username, err = url.PathUnescape(user); err != nil {
		return fmt.Errorf("bad escape in the user name")
	}
	if hasPass {
		if t.Password, err = url.PathUnescape(pass); err != nil {
			return fmt.Errorf("bad escape in the password")
		}
	}
	return nil
}

// hosts reads host:port[,host:port…]; a missing port is the topology's
// usual one.
func (t *Target) hosts(s string) error {
	if s == "" {
		return &URLError{URL: t.masked, Part: "host", Reason: "no host"}
	}
	parts := strings.Split(s, ",")
	if t.Topology == Single && len(parts) > 1 {
		return &URLError{URL: t.masked, Part: "host", Reason: "one host only (use redis-sentinel:// or redis-cluster:// for several)"}
	}
	for i, h := range parts {
		a, err := hostPort(h, t.defaultPort())
		if err != nil {
			return &URLError{URL: t.masked, Part: "host", Reason: fmt.Sprintf("host %d %q: %v", i+1, h, err)}
		}
		t.Addrs = append(t.Addrs, a)
	}
	return nil
}

func (t *Target) defaultPort() string {
	switch t.Topology {
	case Sentinel:
		return "26379"
	case Cluster:
		return "7000"
	}
	return "6379"
}

// missingPort is net.SplitHostPort's *net.AddrError reason for a host
// without a port.
const missingPort = "missing port in address"

// hostPort is h with defPort when h has no port.
func hostPort(h, defPort string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("empty")
	}
	host, port, err := net.SplitHostPort(h)
	var ae *net.AddrError
	if errors.As(err, &ae) && ae.Err == missingPort {
		return net.JoinHostPort(strings.Trim(h, "[]"), defPort), nil
	}
	if err != nil {
		return "", fmt.Errorf("want host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q is not a number in 1..65535", port)
	}
	if host == "" {
		return "", fmt.Errorf("no host name before the port")
	}
	return h, nil
}

// path reads [/db] or, for Sentinel, /MASTERNAME[/db].
func (t *Target) path(p string) error {
	p = strings.TrimSuffix(p, "/")
	if t.Topology == Sentinel {
		name, db, _ := strings.Cut(p, "/")
		if name == "" {
			return &URLError{URL: t.masked, Part: "master name", Reason: "missing: the path must start with the sentinels' master name"}
		}
		t.MasterName, p = name, db
	}
	if p == "" {
		return nil
	}
	if t.Topology == Cluster {
		return &URLError{URL: t.masked, Part: "db", Reason: fmt.Sprintf("%q: a Redis Cluster has only db 0, give no path", p)}
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 {
		return &URLError{URL: t.masked, Part: "db", Reason: fmt.Sprintf("%q is not a database number", p)}
	}
	t.DB = n
	return nil
}

func (t *Target) query(q string) error {
	if q == "" {
		return nil
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return &URLError{URL: t.masked, Part: "query", Reason: "cannot parse it"}
	}
	for k, v := range vals {
		if k != "sentinel_password" || t.Topology != Sentinel {
			return &URLError{URL: t.masked, Part: "query", Reason: fmt.Sprintf("unknown parameter %q", k)}
		}
		t.SentinelPassword = v[len(v)-1]
	}
	return nil
}

// Masked is the URL with its passwords hidden, safe to print.
func (t *Target) Masked() string { return t.masked }

// tlsConfig is the TLS configuration of the rediss… schemes: the first
// address's host name is the server name checked.
func (t *Target) tlsConfig() *tls.Config {
	if !t.TLS {
		return nil
	}
	host, _, _ := net.SplitHostPort(t.Addrs[0])
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}

// NewClient returns a go-redis client for the topology: a plain client, a
// failover client that follows the sentinels' master, or a cluster client.
func (t *Target) NewClient() redis.UniversalClient {
	switch t.Topology {
	case Sentinel:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: t.MasterName, SentinelAddrs: t.Addrs, SentinelPassword: t.SentinelPassword,
			Username: t.Username, Password: t.Password, DB: t.DB, TLSConfig: t.tlsConfig(), PoolSize: t.PoolSize,
		})
	case Cluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: t.Addrs, Username: t.Username, Password: t.Password, TLSConfig: t.tlsConfig(), PoolSize: t.PoolSize,
		})
	}
	return redis.NewClient(&redis.Options{Addr: t.Addrs[0], Username: t.Username, Password: t.Password,
		DB: t.DB, TLSConfig: t.tlsConfig(), PoolSize: t.PoolSize})
}

// AsynqOpt is the matching Asynq connection option: RedisClientOpt,
// RedisFailoverClientOpt or RedisClusterClientOpt.
func (t *Target) AsynqOpt() asynq.RedisConnOpt {
	switch t.Topology {
	case Sentinel:
		return asynq.RedisFailoverClientOpt{MasterName: t.MasterName, SentinelAddrs: t.Addrs,
			SentinelPassword: t.SentinelPassword, Username: t.Username, Password: t.Password,
			DB: t.DB, TLSConfig: t.tlsConfig()}
	case Cluster:
		return asynq.RedisClusterClientOpt{Addrs: t.Addrs, Username: t.Username, Password: t.Password,
			TLSConfig: t.tlsConfig()}
	}
	return asynq.RedisClientOpt{Addr: t.Addrs[0], Username: t.Username, Password: t.Password,
		DB: t.DB, TLSConfig: t.tlsConfig()}
}
