package web

import (
	"errors"
	"net/http"
	"testing"

	"github.com/hibiken/asynq"
)

// allPaths are the dashboard's entry points, each behind auth.
var allPaths = []string{"/", "/api/pool", "/metrics", "/monitoring/", "/monitoring/api/queues"}

func TestAuthGuardsEveryPath(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, Auth: "admin:s3cret:with:colons"})
	tests := []struct {
		name string
		auth string
		want int
	}{
		{name: "no credentials", auth: "", want: http.StatusUnauthorized},
		{name: "wrong password", auth: "admin:nope", want: http.StatusUnauthorized},
		{name: "wrong user", auth: "root:s3cret:with:colons", want: http.StatusUnauthorized},
		{name: "password prefix", auth: "admin:s3cret", want: http.StatusUnauthorized},
		{name: "right credentials", auth: "admin:s3cret:with:colons", want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range allPaths {
				code, _ := get(t, http.MethodGet, base+p, tt.auth)
				if code != tt.want {
					t.Errorf("GET %s: status %d, want %d", p, code, tt.want)
				}
			}
		})
	}
}

func TestAuthChallenge(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Auth: "admin:pw"})
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); got != `Basic realm="crawlq", charset="UTF-8"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
}

func TestNoAuthServesEveryPath(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	for _, p := range allPaths {
		if code, body := get(t, http.MethodGet, base+p, ""); code != http.StatusOK {
			t.Errorf("GET %s: status %d: %s", p, code, body)
		}
	}
}

func TestParseAuthRejectsMalformed(t *testing.T) {
	tests := []struct {
		name string
		auth string
	}{
		{name: "no colon", auth: "admin"},
		{name: "empty user", auth: ":pw"},
		{name: "empty password", auth: "admin:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewServer(Config{Redis: asynq.RedisClientOpt{Addr: "127.0.0.1:1"}, Auth: tt.auth})
			if !errors.Is(err, ErrBadAuth) {
				t.Errorf("NewServer(auth %q) error = %v, want ErrBadAuth", tt.auth, err)
			}
		})
	}
}

// TestReadOnlyRefusesQueueChanges: with ReadOnly, Asynq's UI neither
// deletes nor pauses a queue; without it, it does both.
func TestReadOnlyRefusesQueueChanges(t *testing.T) {
	tests := []struct {
		name     string
		readOnly bool
		refused  bool
	}{
		{name: "read-only", readOnly: true, refused: true},
		{name: "read-write", readOnly: false, refused: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			base := startServer(t, Config{Redis: c.opt, ReadOnly: tt.readOnly})
			insp := asynq.NewInspector(c.opt)
			defer insp.Close()
			code, body := get(t, http.MethodPost, base+"/monitoring/api/queues/wildberries:pause", "")
			if refused := code >= 400; refused != tt.refused {
				t.Errorf("pause: status %d (%s), want refused=%t", code, body, tt.refused)
			}
			if info, err := insp.GetQueueInfo("wildberries"); err != nil || info.Paused == tt.refused {
				t.Errorf("queue wildberries paused=%t (%v) after the pause, want %t", info != nil && info.Paused, err, !tt.refused)
			}
			// ozon holds only pending tasks; asynqmon's delete is not forced,
			// so it would succeed only on an empty queue: empty it first.
			if _, err := insp.DeleteAllPendingTasks("ozon"); err != nil {
				t.Fatal(err)
			}
			code, body = get(t, http.MethodDelete, base+"/monitoring/api/queues/ozon", "")
			if refused := code >= 400; refused != tt.refused {
				t.Fatalf("DELETE status %d (%s), want refused=%t", code, body, tt.refused)
			}
			queues, err := insp.Queues()
			if err != nil {
				t.Fatal(err)
			}
			if exists := contains(queues, "ozon"); exists != tt.refused {
				t.Errorf("queue ozon exists=%t after DELETE, want %t (queues %v)", exists, tt.refused, queues)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
