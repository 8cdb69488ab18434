package pgsink

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestOpenHidesPasswords: a connection error names the server without
// the password, in URL and key=value form.
func TestOpenHidesPasswords(t *testing.T) {
	_, err := Open(context.Background(), "host=127.0.0.1 port=1 user=crawlq password=hunter2 dbname=crawlq connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Open on a closed port, key=value: %v; want an error naming the server without the password", err)
	}
	_, err = Open(context.Background(), "postgres://crawlq:hunter2@127.0.0.1:1/crawlq?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Open on a closed port: %v; want an error naming the server without the password", err)
	}
	_, err = Open(context.Background(), "postgres://crawlq:hunter2@[bad")
	if !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open on a bad URL: %v", err)
	}
}
