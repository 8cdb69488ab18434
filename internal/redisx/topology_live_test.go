package redisx_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hibiken/asynq"

	"crawlq/internal/redisx"
	"crawlq/internal/testredis"
)

// TestOpenRealTopologies: a Sentinel group's and a Cluster's URL open,
// crawlq's client writes and reads through them, and Asynq queues and
// inspects a task through the matching option.
func TestOpenRealTopologies(t *testing.T) {
	tests := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{name: "sentinel", url: func(t *testing.T) string { return testredis.Sentinel(t).URL(testredis.DBHostile + 1) }},
		{name: "cluster", url: func(t *testing.T) string { return testredis.Cluster(t).URL() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c, err := redisx.Open(ctx, tc.url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			key := fmt.Sprintf("crawlq:test:redisx:%s", tc.name)
			if err := c.Client.Set(ctx, key, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v := c.Client.Get(ctx, key).Val(); v != "v" {
				t.Fatalf("read back %q", v)
			}
			c.Client.Del(ctx, key)
			queue := "redisx-" + tc.name
			cl := asynq.NewClient(c.Asynq)
			defer cl.Close()
			insp := asynq.NewInspector(c.Asynq)
			defer insp.Close()
			defer insp.DeleteQueue(queue, true)
			if _, err := cl.Enqueue(asynq.NewTask("x:y", nil), asynq.Queue(queue)); err != nil {
				t.Fatalf("enqueue: %v", err)
			}
			if info, err := insp.GetQueueInfo(queue); err != nil || info.Pending != 1 {
				t.Fatalf("queue info %+v %v", info, err)
			}
		})
	}
}
