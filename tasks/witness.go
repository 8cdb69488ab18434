package tasks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/results"
)

// WitnessFor is how long the witness record remembers an IP's last
// answer on a site. A confirmation's second proxy agreeing with an empty
// answer is a second opinion unless that proxy's own last answer on the
// site, within WitnessFor, was an empty one nothing has shown true: a
// soft ban starts with an empty answer of the IP's own job, so a
// soft-banned IP confirms nothing until that answer is decided. An answer
// with items, or a counted agreement that vouches for an empty one,
// makes the IP a witness again.
const WitnessFor = time.Hour

// vouchPoll is how often a confirmation whose second IP is no witness
// looks whether that IP's own pending empty answer was meanwhile found
// true (awaitVouch).
const vouchPoll = 100 * time.Millisecond

// The witness record of a site is two ZSETs, exit IP → the time (Unix
// ms) of its last answer: witnessPrefix + site holds the IPs whose last
// answer had items or was vouched for, unvouchedPrefix + site those whose
// last answer was empty and not (yet) found true; an IP is in at most one.
// Members older than WitnessFor are trimmed at each empty answer, and
// the keys expire WitnessFor after their last write. Their hash tag is
// the results stream's: an answer with items is recorded in its page's
// transaction (results.JobsTag).
const (
	witnessPrefix   = results.JobsTag + "witness:"
	unvouchedPrefix = results.JobsTag + "unvouched:"
)

// witnessKey is the ZSET of site's IPs whose last answer had items or was
// vouched for; unvouchedKey of those whose last answer was an empty one
// not found true.
func witnessKey(site string) string   { return witnessPrefix + site }
func unvouchedKey(site string) string { return unvouchedPrefix + site }

// sawItemsIn queues, in p (the page's transaction), that ip's answer on
// site at now had items, or was an empty one found true.
func sawItemsIn(ctx context.Context, p redis.Pipeliner, site, ip string, now time.Time) {
	k := witnessKey(site)
	p.ZAdd(ctx, k, redis.Z{Score: float64(now.UnixMilli()), Member: ip})
	p.PExpire(ctx, k, WitnessFor)
	p.ZRem(ctx, unvouchedKey(site), ip)
}

// witness is what the record said of an IP before its empty answer.
type witness struct {
	// Items: its last answer on the site, within WitnessFor, had items or
	// was vouched for.
	Items bool
	// Unvouched: its last answer on the site, within WitnessFor, was an
	// empty one nothing has shown true (still undecided, or contradicted).
	Unvouched bool
}

// counts says whether an agreement of this IP with an empty answer is a
// second opinion: its last answer on the site is not an unvouched empty
// one (an IP the record does not know counts: nothing says it answered
// empty).
func (w witness) counts() bool { return !w.Unvouched }

// answeredEmpty records that ip's answer on site at now had no items
// and says what the record said before, in one transaction.
func answeredEmpty(ctx context.Context, rdb redis.UniversalClient, site, ip string, now time.Time) (witness, error) {
	wk, uk := witnessKey(site), unvouchedKey(site)
	cut := "(" + strconv.FormatInt(now.Add(-WitnessFor).UnixMilli(), 10)
	var items, empty *redis.FloatCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, wk, "-inf", cut)
		p.ZRemRangeByScore(ctx, uk, "-inf", cut)
		items, empty = p.ZScore(ctx, wk, ip), p.ZScore(ctx, uk, ip)
		p.ZRem(ctx, wk, ip)
		p.ZAdd(ctx, uk, redis.Z{Score: float64(now.UnixMilli()), Member: ip})
		p.PExpire(ctx, uk, WitnessFor)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return witness{}, fmt.Errorf("record the empty answer of %s on %s: %w", ip, site, err)
	}
	return witness{Items: items.Err() == nil, Unvouched: empty.Err() == nil}, nil
}

// emptyAnswer records that the IP the job's page came from answered
// empty (runs once per Suspect answer) and keeps what its record said,
// for an agreement decided by a kept answer (this session is then the
// later witness).
func (r *run) emptyAnswer(ctx context.Context, ip string) error {
	if ip == "" {
		return nil
	}
	r.ownAt = r.h.cfg.Now()
	w, err := answeredEmpty(ctx, r.h.cfg.Sink.Redis(), r.job.Site, ip, r.ownAt)
	r.own = w
	return err
}

// sawItems is the page's part of the witness record: the IP that gave the
// page's items (answerIP) is a witness on the site from now.
func (r *run) sawItems(ctx context.Context, items int) []func(redis.Pipeliner) error {
	ip, site, now := r.answerIP, r.job.Site, r.h.cfg.Now()
	if items == 0 || ip == "" {
		return nil
	}
	return []func(redis.Pipeliner) error{func(p redis.Pipeliner) error {
		sawItemsIn(ctx, p, site, ip, now)
		return nil
	}}
}

// vouch records that the empty answers of ips on site were found true by
// a counted agreement at now: each is a witness again, as after an
// answer with items. Without it an IP that answered a query matching
// nothing would confirm nothing until its next answer with items, and on
// a small pool with many such queries every confirmation would wait.
func vouch(ctx context.Context, rdb redis.UniversalClient, site string, now time.Time, ips ...string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, ip := range ips {
			if ip != "" {
				sawItemsIn(ctx, p, site, ip, now)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("vouch for the empty answers of %v on %s: %w", ips, site, err)
	}
	return nil
}

// awaitVouch waits, at most bound, until ip is a witness on site again
// at or after since: its last answer was empty and still undecided
// (another job's confirmation of it runs), and a counted agreement of
// that one vouches for it. A soft-banned IP's empty answer is
// contradicted instead (its proxy quarantined), so it never comes back
// and the wait ends at bound with false.
func awaitVouch(ctx context.Context, rdb redis.UniversalClient, site, ip string, since time.Time, bound time.Duration) (bool, error) {
	t := time.NewTicker(vouchPoll)
	defer t.Stop()
	end := time.NewTimer(bound)
	defer end.Stop()
	for {
		at, err := rdb.ZScore(ctx, witnessKey(site), ip).Result()
		switch {
		case err == nil && int64(at) >= since.UnixMilli():
			return true, nil
		case err != nil && !errors.Is(err, redis.Nil):
			return false, fmt.Errorf("read the witness record of %s on %s: %w", ip, site, err)
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-end.C:
			return false, nil
		case <-t.C:
		}
	}
}
