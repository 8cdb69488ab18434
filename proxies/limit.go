package proxies

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A learned limit is one number crawlq keeps to that it learns from the
// answers instead of being told: a site's pace per IP (pace:<site>:<class>,
// learn.go), and any other a learner keeps the same way. Every learned
// limit of a pool is one HASH in the broker's Redis (crawlq:{pool}:limit:<name>)
// with the fields below, listed in crawlq:{pool}:limits, and its changes
// are logged newest first in crawlq:{pool}:limitlog:<name>. A learner may
// keep its own working state in more fields of the same HASH.
//
// Every change goes through lua/lib/limit.lua's limit_set (inside a
// learner's script) or SetLimit (from Go), which keep the value in its
// bounds, never move a pinned one, and bump gen: a change computed from
// an older gen is refused (fenced), so learners on many servers agree.

// Fields of a learned limit's HASH.
const (
	limitValue  = "value"  // the limit now, in unit
	limitMin    = "min"    // the least value a learner may set
	limitMax    = "max"    // the greatest value a learner may set
	limitUnit   = "unit"   // what value counts: "ms", "requests", …
	limitPinned = "pinned" // "1": set by a user, no learner moves it
	limitAt     = "at"     // ms (Redis clock) of the last change
	limitReason = "reason" // why it last changed
	limitGen    = "gen"    // bumped by every change: the fence
)

// LimitLogLen is how many changes a limit's log keeps.
const LimitLogLen = 500

// Limit is one learned limit as stored.
type Limit struct {
	// Name is "<kind>:<site>[:<scope>]", e.g. "pace:wildberries:datacenter".
	Name string `json:"name"`
	// Value is the limit now; Min and Max bound what a learner may set.
	Value int64 `json:"value"`
	Min   int64 `json:"min"`
	Max   int64 `json:"max"`
	// Unit says what Value counts ("ms" for a pace).
	Unit string `json:"unit"`
	// Pinned: a user set Value; no learner moves it until unpinned.
	Pinned bool `json:"pinned"`
	// Changed is when Value last changed (Redis clock), Reason why.
	Changed time.Time `json:"changed"`
	Reason  string    `json:"reason"`
	// Gen counts the changes; SetLimit with an older one is refused.
	Gen int64 `json:"gen"`
	// State is the learner's own fields of the HASH, as stored.
	State map[string]string `json:"state,omitempty"`
}

// LimitSpec is how a limit starts: its value and bounds.
type LimitSpec struct {
	Start, Min, Max int64
	Unit            string
}

// LimitChange is one entry of a limit's log.
type LimitChange struct {
	At     time.Time `json:"at"`
	Value  int64     `json:"value"`
	Reason string    `json:"reason"`
}

// Errors of the limit store.
var (
	// ErrStaleLimit refuses a change computed from an older gen.
	ErrStaleLimit = errors.New("learned limit changed since it was read")
	// ErrUnknownLimit names a limit the pool does not hold.
	ErrUnknownLimit = errors.New("no such learned limit")
)

// EnsureLimit creates the limit name at spec.Start unless it exists, and
// sets its bounds and unit to spec's (a value now outside them is moved
// inside, logged "bounds"). Every broker that runs a learner calls it
// at start: the value learned survives restarts.
func (b *RedisBroker) EnsureLimit(ctx context.Context, name string, spec LimitSpec) error {
	if spec.Min > spec.Max || spec.Start < spec.Min || spec.Start > spec.Max {
		return fmt.Errorf("learned limit %s: start %d outside bounds %d..%d", name, spec.Start, spec.Min, spec.Max)
	}
	_, err := b.eval(ctx, limitInitScript, b.k.limitInitKeys(name),
		[]any{b.cfg.skew(), name, spec.Start, spec.Min, spec.Max, spec.Unit})
	if err != nil {
		return fmt.Errorf("learned limit %s: %w", name, err)
	}
	return nil
}

// SetLimit changes the limit's value to v for reason if its gen is still
// gen (ErrStaleLimit otherwise), within its bounds; a pinned limit does
// not move (no error: nothing learned overrides a user). It returns the
// limit's gen after the call.
func (b *RedisBroker) SetLimit(ctx context.Context, name string, gen, v int64, reason string) (int64, error) {
	return b.setLimit(ctx, name, gen, v, reason, "set")
}

// PinLimit sets the limit to v (within its bounds) and pins it: no learner
// moves it until UnpinLimit.
func (b *RedisBroker) PinLimit(ctx context.Context, name string, v int64) error {
	_, err := b.setLimit(ctx, name, -1, v, "pinned by a user", "pin")
	return err
}

// UnpinLimit lets learners move the limit again, from its value now.
func (b *RedisBroker) UnpinLimit(ctx context.Context, name string) error {
	_, err := b.setLimit(ctx, name, -1, 0, "unpinned by a user", "unpin")
	return err
}

func (b *RedisBroker) setLimit(ctx context.Context, name string, gen, v int64, reason, op string) (int64, error) {
	res, err := b.eval(ctx, limitSetScript, b.k.limitSetKeys(name), []any{b.cfg.skew(), op, gen, v, reason})
	if err != nil {
		return 0, fmt.Errorf("learned limit %s: %w", name, err)
	}
	switch num(res[0]) {
	case -1:
		return 0, fmt.Errorf("%w: %s", ErrUnknownLimit, name)
	case 0:
		return num(res[1]), fmt.Errorf("%w: %s", ErrStaleLimit, name)
	}
	return num(res[1]), nil
}

// Limits returns every learned limit of the pool, sorted by name.
func (b *RedisBroker) Limits(ctx context.Context) ([]Limit, error) {
	names, err := b.rdb.SMembers(ctx, b.k.limits()).Result()
	if err != nil {
		return nil, fmt.Errorf("learned limits: %w", err)
	}
	sort.Strings(names)
	out := make([]Limit, 0, len(names))
	for _, n := range names {
		l, err := b.Limit(ctx, n)
		if errors.Is(err, ErrUnknownLimit) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Limit returns the learned limit name.
func (b *RedisBroker) Limit(ctx context.Context, name string) (Limit, error) {
	h, err := b.rdb.HGetAll(ctx, b.k.limit(name)).Result()
	if err != nil {
		return Limit{}, fmt.Errorf("learned limit %s: %w", name, err)
	}
	if len(h) == 0 {
		return Limit{}, fmt.Errorf("%w: %s", ErrUnknownLimit, name)
	}
	return limitOf(name, h), nil
}

// limitOf reads a limit's HASH: the known fields, the rest as State.
func limitOf(name string, h map[string]string) Limit {
	i := func(f string) int64 { v, _ := strconv.ParseInt(h[f], 10, 64); return v }
	l := Limit{Name: name, Value: i(limitValue), Min: i(limitMin), Max: i(limitMax), Unit: h[limitUnit],
		Pinned: h[limitPinned] == "1", Reason: h[limitReason], Gen: i(limitGen)}
	if at := i(limitAt); at > 0 {
		l.Changed = ms(at)
	}
	for f, v := range h {
		switch f {
		case limitValue, limitMin, limitMax, limitUnit, limitPinned, limitAt, limitReason, limitGen:
		default:
			if l.State == nil {
				l.State = map[string]string{}
			}
			l.State[f] = v
		}
	}
	return l
}

// LimitLog returns the last n changes of the limit, newest first.
func (b *RedisBroker) LimitLog(ctx context.Context, name string, n int) ([]LimitChange, error) {
	rows, err := b.rdb.LRange(ctx, b.k.limitLog(name), 0, int64(n)-1).Result()
	if err != nil {
		return nil, fmt.Errorf("learned limit %s log: %w", name, err)
	}
	out := make([]LimitChange, 0, len(rows))
	for _, r := range rows {
		at, rest, _ := strings.Cut(r, "|")
		v, reason, _ := strings.Cut(rest, "|")
		a, _ := strconv.ParseInt(at, 10, 64)
		n, _ := strconv.ParseInt(v, 10, 64)
		out = append(out, LimitChange{At: ms(a), Value: n, Reason: reason})
	}
	return out, nil
}
