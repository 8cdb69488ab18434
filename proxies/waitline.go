package proxies

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// WaitLine gives the jobs waiting for a (site, class) with no proxy ready
// their turns: a job hands its worker slot back until its turn, so a
// site with few proxies does not hold the slots other sites could use.
type WaitLine interface {
	// Turn reserves the next turn after nr, a lease's NotReadyError:
	// turns are spaced by the site's min_interval over the proxies of the
	// class not quarantined for the site, from the broker's
	// next-ready time (or, while some are leased and may come free
	// sooner, one spacing from now).
	Turn(ctx context.Context, nr *NotReadyError) (Turn, error)
}

// Turn is a waiting job's turn.
type Turn struct {
	// At is the turn, Wait how long from the broker's now until it.
	At   time.Time
	Wait time.Duration
	// Proxies are the proxies the spacing counted.
	Proxies int
}

var _ WaitLine = (*RedisBroker)(nil)

// waitTurnScript: Turn (lua/wait_turn.lua).
var waitTurnScript = newScript("wait_turn")

// waitLine is a HASH of one site and class's waiting jobs
// (wait_turn.lua): next, the next free turn (ms, Redis clock), and
// spacing, the time between two turns (ms).
func (k keys) waitLine(site string, c Class) string {
	return k.prefix + "waitline:" + site + ":" + string(c)
}

// Turn reserves the next turn of a job nr turned away (WaitLine).
func (b *RedisBroker) Turn(ctx context.Context, nr *NotReadyError) (Turn, error) {
	var until int64
	if !nr.Until.IsZero() {
		until = nr.Until.UnixMilli()
	}
	leased := 0
	if nr.Leased {
		leased = 1
	}
	a := b.argsOf(nr.Site, nr.Class)
	res, err := waitTurnScript.Run(ctx, b.rdb, []string{b.k.waitLine(nr.Site, nr.Class), b.k.ready(nr.Site, nr.Class), b.k.quarantine(nr.Site, nr.Class)},
		b.cfg.skew(), until, leased, a.minInterval).Slice()
	if err != nil {
		return Turn{}, fmt.Errorf("wait turn %s/%s: %w", nr.Site, nr.Class, err)
	}
	at, now := ms(num(res[0])), ms(num(res[1]))
	return Turn{At: at, Wait: at.Sub(now), Proxies: int(num(res[2]))}, nil
}

// LineStats is one wait line: about how many jobs wait their turns and
// how far ahead the turns are taken.
type LineStats struct {
	Site  string `json:"site"`
	Class Class  `json:"class"`
	// Waiting is about how many jobs hold a turn still to come: the time
	// to the line's next free turn over the spacing.
	Waiting int `json:"waiting"`
	// AheadS is how far the next free turn is from now, in seconds: about
	// how long a job joining the line waits.
	AheadS float64 `json:"ahead_s"`
}

// WaitLines reads the wait lines of the given (site, class) pairs, in
// one round trip, and returns those with turns still to come.
func (b *RedisBroker) WaitLines(ctx context.Context, sites map[string][]Class) ([]LineStats, error) {
	pipe := b.rdb.Pipeline()
	timeCmd := pipe.Time(ctx)
	var out []LineStats
	var cmds []*redis.SliceCmd
	for site, classes := range sites {
		for _, c := range classes {
			out = append(out, LineStats{Site: site, Class: c})
			cmds = append(cmds, pipe.HMGet(ctx, b.k.waitLine(site, c), "next", "spacing"))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("wait lines: %w", err)
	}
	now := timeCmd.Val().UnixMilli() + b.cfg.skew()
	kept := out[:0]
	for i, l := range out {
		next, spacing := lineNum(cmds[i].Val(), 0), lineNum(cmds[i].Val(), 1)
		if next <= now || spacing <= 0 {
			continue
		}
		l.Waiting, l.AheadS = int((next-now)/spacing), float64(next-now)/1000
		kept = append(kept, l)
	}
	slices.SortFunc(kept, func(a, b LineStats) int {
		return strings.Compare(a.Site+"\t"+string(a.Class), b.Site+"\t"+string(b.Class))
	})
	return kept, nil
}

// lineNum is the i-th value of an HMGET reply as a number, 0 if absent.
func lineNum(v []any, i int) int64 {
	s, _ := v[i].(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
