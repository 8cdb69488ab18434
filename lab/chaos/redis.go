package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is one redis-server child on its own loopback port and
// directory. Restarts keep the port and the directory, so with AOF on the
// data survives a SIGTERM and a start.
type redisServer struct {
	name string
	dir  string
	port int
	aof  bool
	proc *process
}

// newRedisServer prepares a server in dir/name on a free port.
func newRedisServer(name, dir string, aof bool) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, fmt.Errorf("redis %s dir: %w", name, err)
	}
	return &redisServer{name: name, dir: d, port: port, aof: aof}, nil
}

// URL is the server's redis:// URL (no password: loopback only).
func (r *redisServer) URL() string { return "redis://" + r.addr() + "/0" }

func (r *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

func (r *redisServer) args() []string {
	aof := "no"
	if r.aof {
		aof = "yes"
	}
	return []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", aof, "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
		"--logfile", "redis.log", "--protected-mode", "no"}
}

// start runs redis-server and waits until it answers PING (and has loaded
// its AOF).
func (r *redisServer) start(ctx context.Context) error {
	cmd := exec.Command("redis-server", r.args()...)
	p, err := startProcess(cmd, filepath.Join(r.dir, "stdout.log"))
	if err != nil {
		return fmt.Errorf("start redis %s: %w", r.name, err)
	}
	r.proc = p
	return r.waitReady(ctx)
}

func (r *redisServer) waitReady(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if r.proc.exited() || time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis %s on %s does not answer (log in %s): %w", r.name, r.addr(), r.dir, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM, which makes Redis fsync its AOF and exit, and waits
// for the exit.
func (r *redisServer) stop() error {
	if r.proc == nil {
		return nil
	}
	if err := r.proc.terminate(10 * time.Second); err != nil {
		return fmt.Errorf("stop redis %s: %w", r.name, err)
	}
	return nil
}

// pause freezes the server with SIGSTOP: connections stay open and
// requests hang, as with a Redis that stopped answering; resume thaws it
// with its data intact.
func (r *redisServer) pause() error { return r.proc.signal(stopSignal) }

func (r *redisServer) resume() error { return r.proc.signal(contSignal) }

// kill ends the server at once (cleanup).
func (r *redisServer) kill() {
	if r.proc != nil {
		_ = r.proc.signal(contSignal)
		r.proc.kill()
	}
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

var errNotRunning = errors.New("process not running")
