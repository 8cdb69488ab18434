package chaos

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/proxies"
	"crawlq/testbed"
)

// Modems of a chaos run: changed at most every modemEvery, settling
// modemSettle (long enough for the harness to catch a rotation in
// flight, shorter than the lease TTL), each site rotating them after
// modemRotateAfter requests so that rotations go on all run long.
const (
	modemEvery       = 2 * time.Second
	modemSettle      = 2 * time.Second
	modemRotateAfter = 3
	// rotationWait bounds the wait for a rotation to kill.
	rotationWait = 40 * time.Second
)

// modemConfig is the testbed's modem node; nil without modems.
func modemConfig(o Options) *testbed.ModemConfig {
	if o.Modems <= 0 {
		return nil
	}
	return &testbed.ModemConfig{N: o.Modems, MinInterval: modemEvery, Settle: modemSettle,
		User: "chaos-modem", Password: "chaos-modem-pass", Seed: o.Seed}
}

// classLine is each site's class line of the testbed's crawlq config.
var classLine = regexp.MustCompile(`(?m)^    class: .*$`)

// withRotateAfter gives every site of the worker config rotate_after,
// so the modems rotate before their sites would notice them.
func withRotateAfter(cfg []byte, n string) []byte {
	return classLine.ReplaceAll(cfg, []byte("$0\n    rotate_after: "+n+"   # chaos: modems rotate all run long"))
}

// importModems adds the modems, with their change links, to the pool and
// remembers which modem each proxy id is.
func (c *cluster) importModems(ctx context.Context) error {
	if c.tb.Modems == nil {
		return nil
	}
	ps, err := proxies.ParseReader(strings.NewReader(strings.Join(c.tb.ModemLines(), "\n")), "modems.txt")
	if err != nil {
		return err
	}
	if _, err := c.pool.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		return err
	}
	c.modemByID = map[string]int{}
	for i, p := range ps {
		c.modemByID[p.ID] = i
	}
	return nil
}

// ModemReport is the modems' part of a chaos run: the node's record and
// what became of the rotation whose worker was killed.
type ModemReport struct {
	Modems int `json:"modems"`
	// Rotations and Refusals are the node's accepted and refused changes;
	// TooSoon changes closer than the provider allows and WhileSettling
	// requests through a settling modem (goals: 0); Requests through
	// every modem.
	Rotations     int `json:"rotations"`
	Refusals      int `json:"refusals"`
	TooSoon       int `json:"too_soon"`
	WhileSettling int `json:"while_settling"`
	Requests      int `json:"requests"`
	// Killed is the rotation the kill_rotating fault cut short.
	Killed *KilledRotation `json:"killed_rotation,omitempty"`
}

// KilledRotation is a rotation whose worker was killed -9.
type KilledRotation struct {
	Modem  string `json:"modem"`
	Holder string `json:"holder"`
	// FreedAfterS is from the kill until the mark ended (another worker
	// finished it) or its deadline passed (the modem freed itself): the
	// goal is within the lease TTL. FreedBy says which.
	FreedAfterS float64 `json:"freed_after_s"`
	FreedBy     string  `json:"freed_by"`
	LeaseTTLS   float64 `json:"lease_ttl_s"`
	// RequestsAfterKill are the requests the modem carried from the kill
	// to the end of the run: more than 0 when it was leased again.
	RequestsAfterKill int `json:"requests_after_kill"`
	// before is the modem's requests at the kill.
	before int
}

// rotationMark is a live mark of the rotating HASH: "token|deadline-ms|
// holder|start-ms|site" (proxies' rotate_begin.lua).
type rotationMark struct {
	id, token, holder string
	deadline          int64
}

func parseMark(id, v string) (rotationMark, bool) {
	f := strings.Split(v, "|")
	if len(f) < 3 {
		return rotationMark{}, false
	}
	dl, err := strconv.ParseInt(f[1], 10, 64)
	return rotationMark{id: id, token: f[0], holder: f[2], deadline: dl}, err == nil
}

// rotatingKey is the pool's rotating HASH.
func (c *cluster) rotatingKey() string { return "crawlq:{" + cmp.Or(c.poolName, "pool") + "}:rotating" }

// liveMark is a live rotation held by one of the run's workers, if any.
func (c *cluster) liveMark(ctx context.Context) (rotationMark, *worker, bool) {
	marks, err := c.brokerRDB.HGetAll(ctx, c.rotatingKey()).Result()
	if err != nil {
		return rotationMark{}, nil, false
	}
	now := time.Now().UnixMilli()
	for id, v := range marks {
		m, ok := parseMark(id, v)
		if !ok || m.deadline <= now {
			continue
		}
		for _, w := range c.workers {
			if w.id == m.holder {
				return m, w, true
			}
		}
	}
	return rotationMark{}, nil, false
}

// killRotating is kill_worker with modems: it waits for a worker to
// rotate a modem, kills that one -9 (its leases and active jobs left
// behind as kill_worker's), and watches the modem: its mark must end or expire within the lease TTL,
// (the modem leased again is counted at the end, modemReport); the worker
// restarts RestartAfter after the kill.
func killRotating(ctx context.Context, c *cluster) (string, error) {
	m, w, err := c.awaitRotation(ctx)
	if err != nil {
		return "", err
	}
	modem := c.tb.Modems.Name(c.modemByID[m.id])
	k := &KilledRotation{Modem: modem, Holder: w.id, LeaseTTLS: c.o.LeaseTTL.Seconds(), before: c.tb.Modems.Stats().Requests[modem]}
	w.kill9()
	killed := time.Now()
	c.killedRotation = k
	c.log.Info("rotating worker killed", zap.String("worker", w.id), zap.String("modem", modem))
	k.FreedBy, err = c.awaitFreed(ctx, m)
	k.FreedAfterS = seconds(time.Since(killed))
	if err != nil {
		return "", err
	}
	if err := backoff.Sleep(ctx, time.Until(killed.Add(c.o.RestartAfter))); err != nil {
		return "", err
	}
	note := fmt.Sprintf("%s killed -9 rotating %s, its rotation freed (%s) after %.1fs; restarted", w.id, modem, k.FreedBy, k.FreedAfterS)
	if err := c.restart(ctx, w); err != nil {
		return note, err
	}
	if k.FreedAfterS > c.o.LeaseTTL.Seconds()+tick.Seconds() {
		return note, fmt.Errorf("the killed rotation of %s was freed after %.1fs, the lease TTL is %s", modem, k.FreedAfterS, c.o.LeaseTTL)
	}
	return note, nil
}

// awaitRotation polls for a live rotation of a run's worker.
func (c *cluster) awaitRotation(ctx context.Context) (rotationMark, *worker, error) {
	deadline := time.Now().Add(rotationWait)
	for time.Now().Before(deadline) {
		if m, w, ok := c.liveMark(ctx); ok {
			return m, w, nil
		}
		if err := backoff.Sleep(ctx, 20*time.Millisecond); err != nil {
			return rotationMark{}, nil, err
		}
	}
	return rotationMark{}, nil, fmt.Errorf("no modem rotation seen in %s", rotationWait)
}

// awaitFreed polls until m's mark is gone or replaced ("ended") or its
// deadline passed ("deadline").
func (c *cluster) awaitFreed(ctx context.Context, m rotationMark) (string, error) {
	limit := time.Now().Add(2 * c.o.LeaseTTL)
	for time.Now().Before(limit) {
		v, err := c.brokerRDB.HGet(ctx, c.rotatingKey(), m.id).Result()
		cur, ok := parseMark(m.id, v)
		switch {
		case err != nil || !ok || cur.token != m.token:
			return "ended", nil
		case cur.deadline <= time.Now().UnixMilli():
			return "deadline", nil
		}
		if err := backoff.Sleep(ctx, 20*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("the killed rotation of %s still live after %s", m.id, 2*c.o.LeaseTTL)
}

// modemReport reads the node's record once the workers stopped.
func (c *cluster) modemReport() *ModemReport {
	if c.tb.Modems == nil {
		return nil
	}
	st := c.tb.Modems.Stats()
	r := &ModemReport{Modems: c.tb.Modems.Len(), Rotations: len(st.Rotations), Refusals: len(st.Refusals),
		TooSoon: st.TooSoon, WhileSettling: len(st.WhileSettling), Killed: c.killedRotation}
	if k := r.Killed; k != nil {
		k.RequestsAfterKill = st.Requests[k.Modem] - k.before
	}
	for _, n := range st.Requests {
		r.Requests += n
	}
	return r
}
