package pgsink

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRedactHidesPasswords: URLs and keyword/value strings lose their
// password in messages, and a connection error names the server without it.
func TestRedactHidesPasswords(t *testing.T) {
	for _, in := range []string{
		"postgres://crawlq:hunter2@db:5432/crawlq?sslmode=disable",
		"postgres://crawlq@db/crawlq?password=hunter2",
		"host=db user=crawlq password=hunter2 dbname=crawlq",
	} {
		if got := Redact(in); strings.Contains(got, "hunter2") || !strings.Contains(got, "xxxxx") {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	_, err := Open(context.Background(), "postgres://crawlq:hunter2@127.0.0.1:1/crawlq?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Open on a closed port: %v; want an error naming the server without the password", err)
	}
	_, err = Open(context.Background(), "postgres://crawlq:hunter2@[bad")
	if !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open on a bad URL: %v", err)
	}
}
