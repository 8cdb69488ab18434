package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keys: a ZSET of server IDs scored by the expiry (ms) of their
// record, and one STRING per server with the record as JSON and a TTL.
const (
	indexKey  = "crawlq:servers"
	recordKey = "crawlq:server:"
)

// Record is one worker's heartbeat.
type Record struct {
	ServerID string    `json:"server_id"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Version  string    `json:"version"`
	Started  time.Time `json:"started"`
	// AsynqID is the ID of the Asynq server the worker runs; empty until
	// the worker found it among Asynq's servers.
	AsynqID string `json:"asynq_id,omitempty"`
	// Paused says why the worker takes no new job (the results backlog
	// is over its bound); empty while it works.
	Paused string `json:"paused,omitempty"`
}

// Write stores r for ttl: the record expires unless written again.
func Write(ctx context.Context, rdb redis.UniversalClient, r Record, ttl time.Duration) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	exp := time.Now().Add(ttl).UnixMilli()
	pipe := rdb.TxPipeline()
	pipe.Set(ctx, recordKey+r.ServerID, b, ttl)
	pipe.ZAdd(ctx, indexKey, redis.Z{Score: float64(exp), Member: r.ServerID})
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("heartbeat %s: %w", r.ServerID, err)
	}
	return nil
}

// Remove deletes the record of serverID (a worker that stops cleanly).
func Remove(ctx context.Context, rdb redis.UniversalClient, serverID string) error {
	pipe := rdb.TxPipeline()
	pipe.Del(ctx, recordKey+serverID)
	pipe.ZRem(ctx, indexKey, serverID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("heartbeat %s: remove: %w", serverID, err)
	}
	return nil
}

// List returns the live records, sorted by server ID, and forgets the
// expired ones.
func List(ctx context.Context, rdb redis.UniversalClient) ([]Record, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := rdb.ZRemRangeByScore(ctx, indexKey, "-inf", "("+now).Err(); err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	ids, err := rdb.ZRange(ctx, indexKey, 0, -1).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = recordKey + id
	}
	vals, err := rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	var out []Record
	for _, v := range vals {
		s, ok := v.(string)
		var r Record
		if ok && json.Unmarshal([]byte(s), &r) == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ServerID < out[j].ServerID })
	return out, nil
}

// Version is the running binary's module version ("(devel)" for a local
// build), with its VCS revision when known ("+dirty" when the build had
// uncommitted changes).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi)
}

// versionOf is Version for the build info bi.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}
