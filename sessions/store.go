package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/fetcher"
	"crawlq/proxies"
)

// record is what Redis keeps of a session between attempts of one task.
type record struct {
	Task    string        `json:"task"`
	Site    string        `json:"site"`
	Class   proxies.Class `json:"class"`
	ProxyID string        `json:"proxy_id"`
	Profile string        `json:"profile"`
	// Browser is the session's whole profile (headers and TLS/HTTP2
	// fingerprint name), so a resume on any server, even one whose build
	// ships other profiles, is the same browser. Records written before it
	// existed fall back to the profile Profile seeds.
	Browser  *fetcher.Profile `json:"browser,omitempty"`
	Cookies  []storedCookie   `json:"cookies,omitempty"`
	Usage    int              `json:"usage"`
	Score    float64          `json:"score"`
	Created  time.Time        `json:"created"`
	Holder   string           `json:"holder"`
	Attempts int              `json:"attempts"`
	// Exit is the session's exit on a proxy that learns its exit IP.
	Exit *exitRecord `json:"exit,omitempty"`
}

// store reads and writes session records.
type store struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

func (s store) load(ctx context.Context, task string) (*record, error) {
	return decodeRecord(task, s.rdb.Get(ctx, sessionKey(task)))
}

// decodeRecord reads a GET of a session record: nil when there is none.
func decodeRecord(task string, cmd *redis.StringCmd) (*record, error) {
	raw, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", task, err)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil // a corrupt record is dropped: the session starts fresh
	}
	return &r, nil
}

func (s store) save(ctx context.Context, r *record) error {
	return s.saveIn(ctx, s.rdb, r)
}

// saveIn writes r through c: the client, or a caller's transaction.
func (s store) saveIn(ctx context.Context, c redis.Cmdable, r *record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode session %s: %w", r.Task, err)
	}
	if err := c.Set(ctx, sessionKey(r.Task), raw, s.ttl).Err(); err != nil {
		return fmt.Errorf("save session %s: %w", r.Task, err)
	}
	return nil
}

func (s store) drop(ctx context.Context, task string) error {
	return s.rdb.Del(ctx, sessionKey(task)).Err()
}
