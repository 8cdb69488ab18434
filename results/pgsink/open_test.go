package pgsink

import (
	"context"
	"crawlq/internal/mask/masktest"
	"errors"
	"strings"
	"testing"
)

// TestOpenHidesPasswords: a connection error names the server without
// the password, in URL and key=value form.
func TestOpenHidesPasswords(t *testing.T) {
	_, err := Open(context.Background(), "host=127.0.0.1 port=1 user=crawlq password="+masktest.PostgresPassword+" dbname=crawlq connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), masktest.PostgresPassword) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Open on a closed port, key=value: %v; want an error naming the server without the password", err)
	}
	_, err = Open(context.Background(), "postgres://crawlq:"+masktest.PostgresPassword+"@127.0.0.1:1/crawlq?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), masktest.PostgresPassword) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Open on a closed port: %v; want an error naming the server without the password", err)
	}
	_, err = Open(context.Background(), "postgres://crawlq:"+masktest.PostgresPassword+"@[bad")
	if !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), masktest.PostgresPassword) {
		t.Errorf("Open on a bad URL: %v", err)
	}
}
