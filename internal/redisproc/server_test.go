package redisproc

import (
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStartOnATakenPortSaysSo: a server whose port was taken between
// FreePort and its bind exits; Start reports ErrAddrInUse (so StartServer
// tries another port) instead of waiting out its five seconds.
func TestStartOnATakenPortSaysSo(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: apt-get install redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	s := &Server{Addr: l.Addr().String(), Port: port, dir: dir,
		args: []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log")}}
	if err := s.Start(); !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("Start on a taken port: %v, want ErrAddrInUse", err)
	}
	started, err := StartServer(t.TempDir(), "--save", "")
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	defer started.Kill()
	if err := Ping(started.Addr); err != nil {
		t.Fatalf("the started server does not answer: %v", err)
	}
}
