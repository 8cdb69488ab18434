package web

import (
	"context"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/heartbeat"
	"crawlq/results"
)

// JoinHeartbeats names st's servers by the --server-id of the workers'
// heartbeat records in rdb (the queue's Redis): a record names the Asynq
// server it runs, or failing that one of the same host and pid. Servers
// are then sorted by server ID. It adds the live schedulers and sinks.
func JoinHeartbeats(ctx context.Context, rdb redis.UniversalClient, st *Status) error {
	recs, err := heartbeat.List(ctx, rdb)
	if err != nil {
		return fmt.Errorf("server heartbeats: %w", err)
	}
	if st.Schedulers, err = heartbeat.ListRole(ctx, rdb, heartbeat.RoleScheduler); err != nil {
		return fmt.Errorf("scheduler heartbeats: %w", err)
	}
	if st.Sinks, err = heartbeat.ListRole(ctx, rdb, heartbeat.RoleSink); err != nil {
		return fmt.Errorf("sink heartbeats: %w", err)
	}
	used := map[int]bool{}
	for pass := range 2 { // first by Asynq ID, then by host and pid
		for _, r := range recs {
			if i := match(st.Servers, r, pass == 0, used); i >= 0 {
				used[i] = true
				st.Servers[i].ServerID, st.Servers[i].Version = r.ServerID, r.Version
				st.Servers[i].Paused = r.Paused
			}
		}
	}
	sort.SliceStable(st.Servers, func(i, j int) bool {
		a, b := st.Servers[i], st.Servers[j]
		if a.ServerID != b.ServerID {
			return a.ServerID < b.ServerID
		}
		return a.ID < b.ID
	})
	return nil
}

// match finds the server r names: by Asynq ID, or (byID false) the first
// unclaimed one of r's host and pid, if r has no Asynq ID.
func match(servers []ServerStatus, r heartbeat.Record, byID bool, used map[int]bool) int {
	for i, s := range servers {
		switch {
		case used[i]:
		case byID && r.AsynqID != "" && s.ID == r.AsynqID:
			return i
		case !byID && r.AsynqID == "" && s.Host == r.Host && s.PID == r.PID:
			return i
		}
	}
	return -1
}

// JoinResults adds the results stream's backlog to st.
func JoinResults(ctx context.Context, rdb redis.UniversalClient, st *Status) error {
	b, err := results.ReadBacklog(ctx, rdb, 0)
	if err != nil {
		return err
	}
	st.Results = &b
	return nil
}
