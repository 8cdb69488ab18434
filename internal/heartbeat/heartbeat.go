package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keys: per role a ZSET of server IDs scored by the expiry (ms) of
// their record, and one STRING per server with the record as JSON and a
// TTL. Workers keep the keys they had before roles (no hash tag); the
// other roles' keys share the tag {heartbeats}, so their writes and
// lists run on a Redis Cluster too.
const (
	indexKey  = "crawlq:servers"
	recordKey = "crawlq:server:"
	// roleKey + role is a role's index, roleKey + role + ":" + id a
	// record of it.
	roleKey = "crawlq:{heartbeats}:"
)

// Roles of the processes that keep a heartbeat.
const (
	RoleWorker    = "" // `crawlq worker`
	RoleScheduler = "scheduler"
	RoleSink      = "sink"
)

// keys are the index and the record-key prefix of role.
func keys(role string) (index, record string) {
	if role == RoleWorker {
		return indexKey, recordKey
	}
	return roleKey + role, roleKey + role + ":"
}

// Record is one process's heartbeat.
type Record struct {
	// Role is the process's: RoleWorker (empty), RoleScheduler or
	// RoleSink.
	Role     string    `json:"role,omitempty"`
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
	index, record := keys(r.Role)
	pipe := rdb.TxPipeline()
	pipe.Set(ctx, record+r.ServerID, b, ttl)
	pipe.ZAdd(ctx, index, redis.Z{Score: float64(exp), Member: r.ServerID})
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("heartbeat %s: %w", r.ServerID, err)
	}
	return nil
}

// Remove deletes the worker record of serverID (a worker that stops
// cleanly).
func Remove(ctx context.Context, rdb redis.UniversalClient, serverID string) error {
	return RemoveRole(ctx, rdb, RoleWorker, serverID)
}

// RemoveRole deletes the record of serverID in role.
func RemoveRole(ctx context.Context, rdb redis.UniversalClient, role, serverID string) error {
	index, record := keys(role)
	pipe := rdb.TxPipeline()
	pipe.Del(ctx, record+serverID)
	pipe.ZRem(ctx, index, serverID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("heartbeat %s: remove: %w", serverID, err)
	}
	return nil
}

// List returns the live workers' records, sorted by server ID, and
// forgets the expired ones.
func List(ctx context.Context, rdb redis.UniversalClient) ([]Record, error) {
	return ListRole(ctx, rdb, RoleWorker)
}

// ListRole returns the live records of role, sorted by server ID (an
// empty list, not nil, when none is live), and forgets the expired ones.
// The index is trimmed after the records are read, by the time then: a
// record Redis expired during the read (its expiry is at least its
// index score) is gone from both, never left in the index unlisted.
func ListRole(ctx context.Context, rdb redis.UniversalClient, role string) ([]Record, error) {
	index, record := keys(role)
	ids, err := rdb.ZRange(ctx, index, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	out := []Record{}
	if len(ids) == 0 {
		return out, nil
	}
	ks := make([]string, len(ids))
	for i, id := range ids {
		ks[i] = record + id
	}
	vals, err := rdb.MGet(ctx, ks...).Result()
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := rdb.ZRemRangeByScore(ctx, index, "-inf", "("+now).Err(); err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
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

// DefaultEvery is how often Keep rewrites a record; a record lives three
// times as long, so a process that died leaves the lists within 15 s.
const DefaultEvery = 5 * time.Second

// Self is the record of this process in role: serverID (default
// host-pid), the host, the pid, the version and now as its start.
func Self(role, serverID string) Record {
	host, _ := os.Hostname()
	if serverID == "" {
		serverID = host + "-" + strconv.Itoa(os.Getpid())
	}
	return Record{Role: role, ServerID: serverID, Host: host, PID: os.Getpid(), Version: Version(), Started: time.Now()}
}

// Keep writes rec every every (DefaultEvery if 0), each write living three
// times that, until ctx ends; then it removes rec and returns. A failed
// write (Redis gone a moment) goes to onErr, if set, and the next beat
// tries again.
func Keep(ctx context.Context, rdb redis.UniversalClient, rec Record, every time.Duration, onErr func(error)) {
	if every <= 0 {
		every = DefaultEvery
	}
	report := func(err error) {
		if err != nil && onErr != nil {
			onErr(err)
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := Write(ctx, rdb, rec, 3*every); ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			report(RemoveRole(context.WithoutCancel(ctx), rdb, rec.Role, rec.ServerID))
			return
		case <-t.C:
		}
	}
}
