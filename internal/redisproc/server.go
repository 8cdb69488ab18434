package redisproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process started by this package (a data node
// or a sentinel), which a test may kill and start again on the same port.
type Server struct {
	Addr string
	Port int
	args []string
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartServer runs redis-server with args (a config file first, if any) on
// a free port, its files in dir. A port found free can be taken before
// the server binds it (by any process's outgoing connection: they draw
// from the same range), and a Cluster node also needs its port+10000 for
// the bus; a server that could not bind is started again on another
// port, bindTries times in all.
func StartServer(dir string, args ...string) (*Server, error) {
	var err error
	for range bindTries {
		var port int
		if port, err = FreePort(); err != nil {
			return nil, err
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, dir: dir}
		s.args = append(slices.Clone(args), "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"))
		_ = os.Remove(filepath.Join(dir, "redis.log")) // a failed try's log
		if err = s.Start(); !errors.Is(err, ErrAddrInUse) {
			return s, err
		}
	}
	return nil, err
}

// bindTries is how many ports StartServer tries.
const bindTries = 5

// ErrAddrInUse: the server exited because its port (or its Cluster bus
// port) was taken.
var ErrAddrInUse = errors.New("address already in use")

// Start runs the server (again), and waits until it answers PING, or
// until it exits (ErrAddrInUse when its port was taken).
func (s *Server) Start() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("no redis-server in PATH: install it (apt-get install redis-server)")
	}
	cmd := exec.Command(bin, s.args...)
	cmd.SysProcAttr = parentDeathAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	for i := 0; i < 200; i++ {
		if Ping(s.Addr) == nil {
			return nil
		}
		select {
		case <-exited:
			return s.exitError()
		case <-time.After(25 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server on %s did not answer within 5s (log in %s)", s.Addr, s.dir)
}

// exitError says why the server exited at its start, from its log.
func (s *Server) exitError() error {
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if bytes.Contains(log, []byte("Address already in use")) {
		return fmt.Errorf("redis-server on %s: %w", s.Addr, ErrAddrInUse)
	}
	return fmt.Errorf("redis-server on %s exited at its start (log in %s)", s.Addr, s.dir)
}

// Kill sends SIGKILL: the server dies at once, whatever it has not yet sent
// to its replicas is lost.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	s.cmd = nil
	for i := 0; i < 200 && Ping(s.Addr) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// Client returns a client of this one server.
func (s *Server) Client() *redis.Client { return redis.NewClient(&redis.Options{Addr: s.Addr}) }

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ping checks that a Redis answers at a within two seconds.
func Ping(a string) error {
	c := redis.NewClient(&redis.Options{Addr: a, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// Alive says whether the server answers PING.
func (s *Server) Alive() bool { return Ping(s.Addr) == nil }
