package redisx

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

func TestParseURLTopologies(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Target
	}{
		{name: "single", in: "redis://:pw@10.0.0.5:6379/3",
			want: Target{Topology: Single, Addrs: []string{"10.0.0.5:6379"}, DB: 3, Password: "pw"}},
		{name: "single default port and db", in: "redis://localhost",
			want: Target{Topology: Single, Addrs: []string{"localhost:6379"}}},
		{name: "single tls with user", in: "rediss://app:pw@host:6380/0",
			want: Target{Topology: Single, TLS: true, Addrs: []string{"host:6380"}, Username: "app", Password: "pw"}},
		{name: "sentinel", in: "redis-sentinel://:pw@s1:26379,s2:26380,s3/mymaster/2",
			want: Target{Topology: Sentinel, Addrs: []string{"s1:26379", "s2:26380", "s3:26379"},
				MasterName: "mymaster", DB: 2, Password: "pw"}},
		{name: "sentinel without db", in: "redis-sentinel://s1:26379/mymaster",
			want: Target{Topology: Sentinel, Addrs: []string{"s1:26379"}, MasterName: "mymaster"}},
		{name: "sentinel password", in: "rediss-sentinel://:pw@s1:26379/m/1?sentinel_password=sp",
			want: Target{Topology: Sentinel, TLS: true, Addrs: []string{"s1:26379"}, MasterName: "m", DB: 1,
				Password: "pw", SentinelPassword: "sp"}},
		{name: "cluster", in: "redis-cluster://:p%40ss@n1:7000,n2:7001",
			want: Target{Topology: Cluster, Addrs: []string{"n1:7000", "n2:7001"}, Password: "p@ss"}},
		{name: "cluster tls ipv6", in: "rediss-cluster://[::1]:7000,[::1]",
			want: Target{Topology: Cluster, TLS: true, Addrs: []string{"[::1]:7000", "[::1]:7000"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseURL(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, *got, cmpopts.IgnoreUnexported(Target{})); diff != "" {
				t.Errorf("ParseURL(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestParseURLErrorsNameThePart: a bad URL's error names the wrong part
// and never holds the password.
func TestParseURLErrorsNameThePart(t *testing.T) {
	tests := []struct{ name, in, part, says string }{
		{name: "no scheme", in: "s3cret@host:6379", part: "scheme", says: "no scheme"},
		{name: "unknown scheme", in: "http://:s3cret@host", part: "scheme", says: `"http"`},
		{name: "no host", in: "redis://:s3cret@/0", part: "host", says: "no host"},
		{name: "bad port", in: "redis-cluster://:s3cret@n1:7000,n2:70x1", part: "host", says: `host 2 "n2:70x1": port "70x1"`},
		{name: "empty host in list", in: "redis-sentinel://:s3cret@s1:26379,,s3/m", part: "host", says: "host 2"},
		{name: "two hosts on one server", in: "redis://:s3cret@a:1,b:2/0", part: "host", says: "one host only"},
		{name: "sentinel without master", in: "redis-sentinel://:s3cret@s1:26379", part: "master name", says: "missing"},
		{name: "sentinel bad db", in: "redis-sentinel://:s3cret@s1:26379/m/x", part: "db", says: `"x"`},
		{name: "cluster with db", in: "redis-cluster://:s3cret@n1:7000/3", part: "db", says: "only db 0"},
		{name: "bad db", in: "redis://:s3cret@h:6379/-1", part: "db", says: `"-1"`},
		{name: "unknown parameter", in: "redis://:s3cret@h:6379/0?timeout=1", part: "query", says: `"timeout"`},
		{name: "sentinel password on a cluster", in: "redis-cluster://h:7000?sentinel_password=s3cret", part: "query", says: "sentinel_password"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseURL(tc.in)
			var ue *URLError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseURL(%q) = %v, want a *URLError", tc.in, err)
			}
			if ue.Part != tc.part || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q (part %q): want part %q saying %q", err, ue.Part, tc.part, tc.says)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// TestTargetClients: each topology gets the matching go-redis client and
// Asynq option, with the same servers, DB and credentials.
func TestTargetClients(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		client string
		asynq  asynq.RedisConnOpt
	}{
		{name: "single", in: "redis://:pw@h:6379/2", client: "*redis.Client",
			asynq: asynq.RedisClientOpt{Addr: "h:6379", Password: "pw", DB: 2}},
		{name: "sentinel", in: "redis-sentinel://:pw@s1:26379,s2:26379/m/2", client: "*redis.Client",
			asynq: asynq.RedisFailoverClientOpt{MasterName: "m", SentinelAddrs: []string{"s1:26379", "s2:26379"}, Password: "pw", DB: 2}},
		{name: "cluster", in: "redis-cluster://:pw@n1:7000,n2:7001", client: "*redis.ClusterClient",
			asynq: asynq.RedisClusterClientOpt{Addrs: []string{"n1:7000", "n2:7001"}, Password: "pw"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := ParseURL(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			c := tg.NewClient()
			defer c.Close()
			var kind string
			switch c.(type) {
			case *redis.Client:
				kind = "*redis.Client"
			case *redis.ClusterClient:
				kind = "*redis.ClusterClient"
			}
			if kind != tc.client {
				t.Errorf("client %T, want %s", c, tc.client)
			}
			if diff := cmp.Diff(tc.asynq, tg.AsynqOpt()); diff != "" {
				t.Errorf("asynq option (-want +got):\n%s", diff)
			}
		})
	}
}
