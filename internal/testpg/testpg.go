// Package testpg finds a real PostgreSQL for tests: CRAWLQ_TEST_POSTGRES (a
// postgres:// URL) if set, else 127.0.0.1:5432 (user postgres) if it
// answers, else a server started with initdb/pg_ctl from PATH in a temp
// dir (stopped when the test binary exits), else a failure that says how to
// get one.
//
// Each test gets its own fresh database (DB), dropped at its cleanup, so
// packages and tests never see each other's rows.
package testpg

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	once    sync.Once
	base    string
	findErr error
	seq     atomic.Int64
)

// URL returns the URL of the test server's maintenance database (postgres).
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { base, findErr = find() })
	if findErr != nil {
		t.Fatalf("testpg: %v", findErr)
	}
	return base
}

// DB creates a fresh database for the test and returns its URL; the
// database is dropped (its connections closed) after the test.
func DB(t testing.TB) string {
	t.Helper()
	admin := URL(t)
	name := fmt.Sprintf("crawlq_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec1(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testpg: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec1(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("testpg: drop database %s: %v", name, err)
		}
	})
	return WithDB(admin, name)
}

// WithDB is u with its database replaced by name.
func WithDB(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

func exec1(ctx context.Context, u, sql string) error {
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

func find() (string, error) {
	if u := os.Getenv("CRAWLQ_TEST_POSTGRES"); u != "" {
		if err := ping(u); err != nil {
			return "", fmt.Errorf("CRAWLQ_TEST_POSTGRES does not answer: %w", err)
		}
		return u, nil
	}
	const local = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	if ping(local) == nil {
		return local, nil
	}
	return start()
}

func ping(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return exec1(ctx, u, "SELECT 1")
}

// start runs initdb and pg_ctl from PATH on a free port in a temp dir.
// The server is tied to the test binary's lifetime (its postmaster is
// asked to exit when the test process dies).
func start() (string, error) {
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("no PostgreSQL at 127.0.0.1:5432 and no initdb/pg_ctl in PATH: " +
			"install it (apt-get install postgresql; add /usr/lib/postgresql/*/bin to PATH) or set CRAWLQ_TEST_POSTGRES=postgres://…")
	}
	if os.Geteuid() == 0 {
		return "", fmt.Errorf("no PostgreSQL at 127.0.0.1:5432, and initdb refuses to run as root: " +
			"start one (.ci/run does) or set CRAWLQ_TEST_POSTGRES=postgres://…")
	}
	dir, err := os.MkdirTemp("", "crawlq-pg-")
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(initdb, "-D", data, "-U", "postgres", "-A", "trust").CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(string(out)))
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir)
	cmd := exec.Command(pgctl, "-D", data, "-l", filepath.Join(dir, "pg.log"), "-o", opts, "-w", "start")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("pg_ctl start (log in %s): %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	stopWithParent(pgctl, data)
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable", nil
}
