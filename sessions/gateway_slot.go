package sessions

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"crawlq/proxies"
)

// A gateway slot keeps its provider session across sessions: the next
// session on the slot takes over the exit the last one had while the
// provider keeps it, so a sticky gateway stays on one IP.

// newGatewaySession is a new session id for a gateway ("" for a plain
// proxy): 12 lowercase letters and digits.
func newGatewaySession(p proxies.Proxy) string {
	if p.Gateway == nil {
		return ""
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail on Linux
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// slotExit is the provider session a fresh session on gateway slot p
// takes over: the slot's last one while the provider keeps it (its exit
// IP known, no probe needed), else a new session id.
func (m *Manager) slotExit(ctx context.Context, p proxies.Proxy) *exitRecord {
	fresh := &exitRecord{ID: newGatewaySession(p)}
	if p.Gateway == nil {
		return fresh
	}
	raw, err := m.cfg.Redis.Get(ctx, slotKey(p.ID)).Bytes()
	var e exitRecord
	if err != nil || json.Unmarshal(raw, &e) != nil || e.ID == "" {
		return fresh
	}
	return &e
}

// keepSlotExit keeps the ended session's provider session for the next
// session of its gateway slot, until the provider may end it (its idle
// time or TTL, less the margin); false when it is too near that.
func (m *Manager) keepSlotExit(ctx context.Context, s *Session) bool {
	p := s.Lease().Proxy
	s.mu.Lock()
	e := s.rec.Exit
	s.mu.Unlock()
	if p.Gateway == nil || e == nil || e.IP == "" {
		return false
	}
	now, gw := time.Now(), p.Gateway
	ttl := min(gw.Idle-margin(gw.Idle)-now.Sub(e.Last), gw.TTL-margin(gw.TTL)-now.Sub(e.Start))
	raw, err := json.Marshal(e)
	if ttl < time.Millisecond || err != nil {
		return false
	}
	return m.cfg.Redis.Set(context.WithoutCancel(ctx), slotKey(p.ID), raw, ttl).Err() == nil
}

// dropSlotExit forgets slot p's provider session (its exit was banned).
func (m *Manager) dropSlotExit(ctx context.Context, p proxies.Proxy) {
	if p.Gateway != nil {
		m.cfg.Redis.Del(context.WithoutCancel(ctx), slotKey(p.ID))
	}
}
