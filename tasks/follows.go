package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"crawlq/results"
)

// A job's follow-ups (the product or item jobs its listing pages queued,
// or found queued already) are kept in a set per task, written in each
// page's transaction with its items and progress, so that `enqueue --wait`
// can wait for the whole crawl and not just the jobs it queued itself.
const (
	followsPrefix = results.JobsTag + "follows:"
	// followsTTL keeps the set as long as Asynq keeps a finished task.
	followsTTL = DefaultRetention
)

// followsIn adds refs to task's follow-up set in p (the page's
// transaction). A member is "queue<TAB>task ID".
func followsIn(ctx context.Context, p redis.Pipeliner, task string, refs []Queued) {
	members := make([]any, len(refs))
	for i, q := range refs {
		members[i] = q.Queue + "\t" + q.ID
	}
	key := followsPrefix + task
	p.SAdd(ctx, key, members...)
	p.Expire(ctx, key, followsTTL)
}

// FollowUps reads the follow-up tasks of each of ids in one round trip:
// what the jobs' pages written so far queued (Queued.Type is not kept).
func FollowUps(ctx context.Context, rdb redis.UniversalClient, ids []string) (map[string][]Queued, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StringSliceCmd, len(ids))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.SMembers(ctx, followsPrefix+id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read follow-ups: %w", err)
	}
	out := map[string][]Queued{}
	for i, cmd := range cmds {
		for _, m := range cmd.Val() {
			queue, id, ok := strings.Cut(m, "\t")
			if !ok || queue == "" || id == "" {
				return nil, fmt.Errorf("follow-up of task %s: bad entry %q", ids[i], m)
			}
			out[ids[i]] = append(out[ids[i]], Queued{ID: id, Queue: queue})
		}
	}
	return out, nil
}
