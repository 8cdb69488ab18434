package redisx

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/goleak"
)

// TestEmbeddedRunsAsynq: the zero-setup Redis answers and Asynq can queue
// and inspect on it (the embedded default itself is what is tested here).
func TestEmbeddedRunsAsynq(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, Embedded)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Embedded() || c.Ping(ctx) != nil {
		t.Fatal("embedded redis does not answer")
	}
	cl := asynq.NewClient(c.Asynq)
	defer cl.Close()
	if _, err := cl.Enqueue(asynq.NewTask("x:y", nil), asynq.Queue("q")); err != nil {
		t.Fatalf("enqueue on embedded redis: %v", err)
	}
	insp := asynq.NewInspector(c.Asynq)
	defer insp.Close()
	if info, err := insp.GetQueueInfo("q"); err != nil || info.Pending != 1 {
		t.Fatalf("queue info %+v %v", info, err)
	}
}

func TestBadURLNamesTheScheme(t *testing.T) {
	_, err := Open(context.Background(), "http://:pw@host")
	if err == nil || !strings.Contains(err.Error(), `scheme "http"`) || strings.Contains(err.Error(), "pw@") {
		t.Fatalf("err %v: want an error naming the scheme without the password", err)
	}
}

// TestEmbeddedExpiresKeys: keys with a TTL go away on the wall clock, as
// in a real Redis (miniredis does not do this unless told), and Close stops
// the loop that expires them.
func TestEmbeddedExpiresKeys(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	c, err := Open(ctx, Embedded)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Client.Set(ctx, "k", "v", 20*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Client.Exists(ctx, "k").Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("a key with a 20ms TTL still exists after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
