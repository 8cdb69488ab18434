package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// ChangeIPPath is where the control server serves the change links:
// ChangeIPPath + KEY + "/" + NAME, by GET or POST, the shape mobile
// proxy providers' links have.
const ChangeIPPath = "/changeip/"

// ModemRotation is one accepted change of a modem's IP.
type ModemRotation struct {
	Modem string    `json:"modem"`
	At    time.Time `json:"at"`
	// From is the IP the modem had; To the one it has from Ready on.
	From  string    `json:"from"`
	To    string    `json:"to"`
	Ready time.Time `json:"ready"`
	// Dropped counts the connections through the modem the change cut.
	Dropped int `json:"dropped"`
}

// ModemRefusal is a change refused because it came within MinInterval
// of the modem's previous accepted change.
type ModemRefusal struct {
	Modem string    `json:"modem"`
	At    time.Time `json:"at"`
	// RetryAfter is what the 429's Retry-After said.
	RetryAfter time.Duration `json:"retry_after"`
}

// ModemSettlingRequest is a proxy request (or CONNECT) that arrived
// through a modem while it was settling; the modem refused it (502).
type ModemSettlingRequest struct {
	Modem string    `json:"modem"`
	At    time.Time `json:"at"`
	// Target is the host:port the request was for.
	Target string `json:"target"`
}

// ModemStats is what the modem node did.
type ModemStats struct {
	// Rotations are the accepted changes, in order.
	Rotations []ModemRotation `json:"rotations"`
	// Refusals are the changes refused with 429, in order.
	Refusals []ModemRefusal `json:"refusals"`
	// TooSoon counts accepted changes closer than MinInterval to the same
	// modem's previous accepted change, counted from Rotations: a modem
	// that keeps its provider's limit makes it 0.
	TooSoon int `json:"too_soon"`
	// WhileSettling are the requests that arrived through a modem while
	// it was settling (all refused).
	WhileSettling []ModemSettlingRequest `json:"while_settling"`
	// Requests counts the requests each modem carried (forwarded requests
	// and tunnels opened), by modem name.
	Requests map[string]int `json:"requests"`
	// AuthRefused counts requests refused for bad credentials.
	AuthRefused int `json:"auth_refused"`
}

// Stats is a copy of what the node did so far.
func (m *Modems) Stats() ModemStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stats
	st.Rotations = append([]ModemRotation(nil), st.Rotations...)
	st.Refusals = append([]ModemRefusal(nil), st.Refusals...)
	st.WhileSettling = append([]ModemSettlingRequest(nil), st.WhileSettling...)
	st.Requests = make(map[string]int, len(m.stats.Requests))
	for k, v := range m.stats.Requests {
		st.Requests[k] = v
	}
	st.TooSoon = tooSoon(st.Rotations, m.cfg.MinInterval)
	return st
}

// tooSoon counts rotations closer than least to the same modem's previous
// one.
func tooSoon(rs []ModemRotation, least time.Duration) int {
	last := map[string]time.Time{}
	n := 0
	for _, r := range rs {
		if prev, ok := last[r.Modem]; ok && r.At.Sub(prev) < least {
			n++
		}
		last[r.Modem] = r.At
	}
	return n
}

func (m *Modems) serveControl() {
	defer m.wg.Done()
	if err := m.srv.Serve(m.ctl); err != nil && !errors.Is(err, http.ErrServerClosed) {
		m.log.Warn("modem control stopped", zap.Error(err))
	}
}

// controlHandler serves ChangeIPPath + KEY/NAME: 200 with the settle
// time, 429 with Retry-After within MinInterval, 403 for a wrong key,
// 404 for an unknown modem, 405 for a method other than GET and POST.
func (m *Modems) controlHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, ChangeIPPath)
		key, name, _ := strings.Cut(rest, "/")
		switch {
		case !ok:
			writeModemJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "not found"})
		case r.Method != http.MethodGet && r.Method != http.MethodPost:
			w.Header().Set("Allow", "GET, POST")
			writeModemJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "error": "method not allowed"})
		case key != m.cfg.Key:
			writeModemJSON(w, http.StatusForbidden, map[string]any{"ok": false, "error": "wrong key"})
		case m.byName[name] == nil:
			writeModemJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "no such modem"})
		default:
			if !m.held(r.Context()) {
				return
			}
			m.answerChange(w, m.byName[name])
		}
	})
}

// held waits out HoldNextChange's hold; false when the caller left or
// the node stopped meanwhile.
func (m *Modems) held(ctx context.Context) bool {
	d := m.takeHold()
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-m.ctx.Done():
		return false
	}
}

// answerChange changes md's IP and answers how it went.
func (m *Modems) answerChange(w http.ResponseWriter, md *modem) {
	wait, ok := m.change(md)
	if !ok {
		secs := max(int(math.Ceil(wait.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeModemJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false,
			"error": "ip changed too recently", "retry_after": secs})
		return
	}
	writeModemJSON(w, http.StatusOK, map[string]any{"ok": true, "name": md.name,
		"settle_ms": m.cfg.Settle.Milliseconds()})
}

func writeModemJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// change gives md a new IP, settling from now: it drops every open
// connection through md first. Within MinInterval of md's previous
// change it refuses (recorded) and says how long is left.
func (m *Modems) change(md *modem) (wait time.Duration, ok bool) {
	m.mu.Lock()
	now := m.cfg.Now()
	if !md.changed.IsZero() && now.Sub(md.changed) < m.cfg.MinInterval {
		wait = m.cfg.MinInterval - now.Sub(md.changed)
		m.stats.Refusals = append(m.stats.Refusals, ModemRefusal{Modem: md.name, At: now,
			RetryAfter: time.Duration(max(math.Ceil(wait.Seconds()), 1)) * time.Second})
		m.mu.Unlock()
		return wait, false
	}
	from, to := md.exit, m.drawLocked(md)
	conns, cancel, tr := md.conns, md.cancel, md.tr
	md.had = append(md.had, from)
	md.exit, md.changed, md.ready = to, now, now.Add(m.cfg.Settle)
	if m.cfg.WholeSeconds {
		md.changed = now.Round(time.Second)
	}
	md.epoch++
	md.conns = map[net.Conn]struct{}{}
	md.ctx, md.cancel = context.WithCancel(m.ctx)
	md.tr = exitTransport(to)
	m.stats.Rotations = append(m.stats.Rotations, ModemRotation{Modem: md.name, At: now, From: from, To: to,
		Ready: md.ready, Dropped: len(conns)})
	m.mu.Unlock()
	cancel()
	for c := range conns {
		c.Close()
	}
	tr.CloseIdleConnections()
	m.log.Debug("modem ip changed", zap.String("modem", md.name), zap.String("from", from), zap.String("to", to))
	return 0, true
}

// drawLocked picks md's next IP: never one a modem has or is settling
// to (md's own included); NextExit's choice when it is free, else with
// chance Reuse the most recent free IP md had before, else a free one at
// random.
func (m *Modems) drawLocked(md *modem) string {
	held := map[string]bool{}
	for _, o := range m.modems {
		held[o.exit] = true
	}
	if ip := md.next; ip != "" && !held[ip] {
		md.next = ""
		return ip
	}
	if m.cfg.Reuse > 0 && m.rng.Float64() < m.cfg.Reuse {
		for i := len(md.had) - 1; i >= 0; i-- {
			if !held[md.had[i]] {
				return md.had[i]
			}
		}
	}
	var free []string
	for _, ip := range m.pool {
		if !held[ip] {
			free = append(free, ip)
		}
	}
	return free[m.rng.IntN(len(free))]
}
