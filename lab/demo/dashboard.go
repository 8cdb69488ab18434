package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"crawlq/web"
)

// dashboardRefresh is the dashboard's refresh period in the demo: short,
// since the whole run lasts a minute.
const dashboardRefresh = 2 * time.Second

// dashboard is the web UI served while the demo runs.
type dashboard struct {
	srv    *web.Server
	url    string
	cancel context.CancelFunc
	done   chan error
}

// startDashboard serves the web UI on cfg.Listen, or on a free port of the
// same host if that port is taken (moved tells). No Listen, no dashboard.
func startDashboard(c *cluster, cfg Config) (d *dashboard, moved bool, err error) {
	if cfg.Listen == "" {
		return nil, false, nil
	}
	l, moved, err := listen(cfg.Listen)
	if err != nil {
		return nil, false, err
	}
	srv, err := web.NewServer(web.Config{Redis: c.conn.Asynq, Broker: c.broker, Logger: cfg.Logger, Refresh: dashboardRefresh})
	if err != nil {
		l.Close()
		return nil, false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	d = &dashboard{srv: srv, url: "http://" + l.Addr().String() + "/", cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- srv.Serve(ctx, l) }()
	return d, moved, nil
}

// listen binds addr; if its port is in use, it binds a free port on the
// same host and reports moved.
func listen(addr string) (l net.Listener, moved bool, err error) {
	l, err = net.Listen("tcp", addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		if err != nil {
			return nil, false, fmt.Errorf("dashboard: listen %s: %w", addr, err)
		}
		return l, false, nil
	}
	host, _, _ := net.SplitHostPort(addr)
	if l, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err != nil {
		return nil, false, fmt.Errorf("dashboard: %s is taken and no free port on %q: %w", addr, host, err)
	}
	return l, true, nil
}

// stop shuts the dashboard down and closes its Redis connections; safe on
// a nil dashboard.
func (d *dashboard) stop() error {
	if d == nil {
		return nil
	}
	d.cancel()
	return errors.Join(<-d.done, d.srv.Close())
}
