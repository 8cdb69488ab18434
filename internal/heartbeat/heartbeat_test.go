package heartbeat

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
)

func TestWriteListRemove(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBHeartbeat)
	ctx := context.Background()
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []Record{
		{ServerID: "b", Host: "h2", PID: 2, Version: "v1", Started: started, AsynqID: "uuid-b"},
		{ServerID: "a", Host: "h1", PID: 1, Version: "v1", Started: started},
	}
	for _, r := range recs {
		if err := Write(ctx, rdb, r, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Record{recs[1], recs[0]}, got); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
	if err := Remove(ctx, rdb, "a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := List(ctx, rdb); len(got) != 1 || got[0].ServerID != "b" {
		t.Errorf("after Remove(a): %+v, want only b", got)
	}
}

// TestRecordExpires: a record not written again leaves the list by itself.
func TestRecordExpires(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBHeartbeat)
	ctx := context.Background()
	if err := Write(ctx, rdb, Record{ServerID: "gone"}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := List(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("record still listed after its TTL: %+v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := rdb.ZCard(ctx, indexKey).Val(); n != 0 {
		t.Errorf("index keeps %d expired ids", n)
	}
}

func TestVersionOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go run, no VCS", debug.BuildInfo{}, "(devel)"},
		{"local build", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			"(devel) 0123456789ab"},
		{"uncommitted changes", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) 0123456789ab+dirty"},
		{"go install @version", debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(&tc.bi); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestKeepRoles: Keep lists a scheduler's record under its role only (not
// among the workers) while it runs, and removes it when ctx ends.
func TestKeepRoles(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBHeartbeat)
	ctx, cancel := context.WithCancel(context.Background())
	rec := Self(RoleScheduler, "")
	if rec.ServerID == "" || rec.PID == 0 || rec.Version == "" {
		t.Fatalf("Self: %+v", rec)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Keep(ctx, rdb, rec, 20*time.Millisecond, func(err error) { t.Errorf("keep: %v", err) })
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := ListRole(context.Background(), rdb, RoleScheduler)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			if !got[0].Started.Equal(rec.Started) || got[0].Role != RoleScheduler || got[0].ServerID != rec.ServerID {
				t.Errorf("listed %+v, want %+v", got[0], rec)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the scheduler's record never listed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ws, _ := List(context.Background(), rdb); len(ws) != 0 {
		t.Errorf("a scheduler listed among the workers: %+v", ws)
	}
	if sinks, _ := ListRole(context.Background(), rdb, RoleSink); len(sinks) != 0 {
		t.Errorf("a scheduler listed among the sinks: %+v", sinks)
	}
	cancel()
	<-done
	if got, _ := ListRole(context.Background(), rdb, RoleScheduler); len(got) != 0 {
		t.Errorf("still listed after Keep returned: %+v", got)
	}
}
