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

// WitnessFor is how long an answer with items makes its IP a witness on
// its site: a confirmation's second proxy agreeing with an empty answer
// is a second opinion only when its own last answer on the site, within
// WitnessFor, had items. Two IPs soft-banned at the same time both
// answer empty; an IP's soft-banned answer is empty too, so once crawlq
// has seen one, that IP confirms nothing until it answers with items
// again.
const WitnessFor = time.Hour

// witnessPrefix + site is a ZSET: exit IP → the time (Unix ms) of its
// last answer on the site with items; an empty answer of that IP removes
// it. Members older than WitnessFor are trimmed when a confirmation reads
// it, and the key expires WitnessFor after its last write. Its hash tag is
// the results stream's: an answer with items is recorded in its page's
// transaction (results.JobsTag).
const witnessPrefix = results.JobsTag + "witness:"

// witnessKey is the ZSET of site's IPs whose last answer had items.
func witnessKey(site string) string { return witnessPrefix + site }

// sawItemsIn queues, in p (the page's transaction), that ip's answer on
// site at now had items.
func sawItemsIn(ctx context.Context, p redis.Pipeliner, site, ip string, now time.Time) {
	k := witnessKey(site)
	p.ZAdd(ctx, k, redis.Z{Score: float64(now.UnixMilli()), Member: ip})
	p.PExpire(ctx, k, WitnessFor)
}

// witness is what the record said of an IP before its empty answer.
type witness struct {
	// Items: its last answer on the site, within WitnessFor, had items.
	Items bool
	// Cold: no IP at all answered the site with items within WitnessFor
	// (a fresh cluster, or a site whose every query has no results): no
	// IP can be told from another, so any second answer counts, as before
	// the rule.
	Cold bool
}

// counts says whether an agreement of this IP with an empty answer is a
// second opinion.
func (w witness) counts() bool { return w.Items || w.Cold }

// answeredEmpty records that ip's answer on site at now had no items
// (its record goes) and says what the record said before, in one
// transaction.
func answeredEmpty(ctx context.Context, rdb redis.UniversalClient, site, ip string, now time.Time) (witness, error) {
	k := witnessKey(site)
	var had *redis.FloatCmd
	var others *redis.IntCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, k, "-inf", "("+strconv.FormatInt(now.Add(-WitnessFor).UnixMilli(), 10))
		had = p.ZScore(ctx, k, ip)
		p.ZRem(ctx, k, ip)
		others = p.ZCard(ctx, k)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return witness{}, fmt.Errorf("record the empty answer of %s on %s: %w", ip, site, err)
	}
	items := had.Err() == nil
	return witness{Items: items, Cold: !items && others.Val() == 0}, nil
}

// emptyAnswer records that the IP the job's page came from answered
// empty (runs once per Suspect answer) and keeps what its record said,
// for an agreement decided by a kept answer (this session is then the
// later witness).
func (r *run) emptyAnswer(ctx context.Context, ip string) error {
	if ip == "" {
		return nil
	}
	w, err := answeredEmpty(ctx, r.h.cfg.Sink.Redis(), r.job.Site, ip, r.h.cfg.Now())
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
