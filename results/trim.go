package results

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The durable sink's marks on the stream. While SinkMarkerKey exists, page
// writes append without trimming, and the sink trims (TrimAcked) only what
// its group SinkGroup acknowledged: an entry waits in Redis until it is in
// PostgreSQL. Without the marker the stream keeps its MAXLEN bound.
const (
	// SinkMarkerKey holds the sink group's name while a durable sink
	// exists. It carries {jobs}: the page's transaction reads it.
	SinkMarkerKey = StreamKey + ":sink"
	// SinkGroup is the consumer group of `crawlq sink`.
	SinkGroup = "crawlq-sink"
)

// MarkSink creates the sink's consumer group, from the stream's first
// entry, and marks the stream as drained by it. The marker comes first, so
// no page trims by MAXLEN once the group exists.
func MarkSink(ctx context.Context, rdb redis.UniversalClient) error {
	if err := rdb.Set(ctx, SinkMarkerKey, SinkGroup, 0).Err(); err != nil {
		return fmt.Errorf("mark %s: %w", StreamKey, err)
	}
	err := rdb.XGroupCreateMkStream(ctx, StreamKey, SinkGroup, "0").Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
		return fmt.Errorf("create group %s on %s: %w", SinkGroup, StreamKey, err)
	}
	return nil
}

// UnmarkSink removes the marker and the group: the stream goes back to
// its MAXLEN bound, and what the group had not acknowledged stays in the
// stream only until that bound.
func UnmarkSink(ctx context.Context, rdb redis.UniversalClient) error {
	if err := rdb.Del(ctx, SinkMarkerKey).Err(); err != nil {
		return fmt.Errorf("unmark %s: %w", StreamKey, err)
	}
	err := rdb.XGroupDestroy(ctx, StreamKey, SinkGroup).Err()
	if err != nil && !isNoGroup(err) {
		return fmt.Errorf("destroy group %s: %w", SinkGroup, err)
	}
	return nil
}

// isNoGroup says err is Redis's answer for a stream or a group that does
// not exist: nil, or a NOGROUP or "no such key" error reply.
func isNoGroup(err error) bool {
	return errors.Is(err, redis.Nil) || IsNoGroup(err) || redis.HasErrorPrefix(err, "no such key")
}

// IsNoGroup says err is Redis's NOGROUP error reply: the stream or its
// consumer group does not exist (a reader's group was removed).
func IsNoGroup(err error) bool { return redis.HasErrorPrefix(err, "NOGROUP") }

// SinkAttached says whether a durable sink drains the stream: the stream
// has the sink's consumer group (MarkSink). Its entries then go to
// PostgreSQL, and those stored are trimmed from the stream.
func SinkAttached(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
	groups, err := rdb.XInfoGroups(ctx, StreamKey).Result()
	if err != nil {
		if isNoGroup(err) {
			return false, nil
		}
		return false, fmt.Errorf("read the groups of %s: %w", StreamKey, err)
	}
	for _, g := range groups {
		if g.Name == SinkGroup {
			return true, nil
		}
	}
	return false, nil
}

// TrimAcked removes the entries the sink group acknowledged (XTRIM MINID
// at its oldest unacknowledged entry, approximately: never past it) and
// returns how many went.
func TrimAcked(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	n, err := trimScript.Run(ctx, rdb, []string{StreamKey}, SinkGroup).Int64()
	if err != nil {
		return 0, fmt.Errorf("trim %s: %w", StreamKey, err)
	}
	return max(n, 0), nil
}

// Backlog is the state of the results stream.
type Backlog struct {
	// Sink: a durable sink marked the stream (it is trimmed only past what
	// the sink acknowledged).
	Sink bool `json:"sink"`
	// Length is the stream's length.
	Length int64 `json:"length"`
	// Unacked is what the sink has not acknowledged yet (0 without a sink).
	Unacked int64 `json:"unacked"`
	// MaxLen is the stream's MAXLEN bound without a sink.
	MaxLen int64 `json:"max_len"`
	// Rejected is how many entries the sink could not make a row of and
	// kept in its rejected table instead (RejectedKey).
	Rejected int64 `json:"rejected"`
}

// AtBound says the stream, without a sink, reached its MAXLEN bound: from
// now on every new entry pushes an old one out, exported or not.
func (b Backlog) AtBound() bool { return !b.Sink && b.Length >= b.MaxLen }

// ReadBacklog reads the stream's Backlog (maxLen <= 0: DefaultMaxLen).
func ReadBacklog(ctx context.Context, rdb redis.UniversalClient, maxLen int64) (Backlog, error) {
	if maxLen <= 0 {
		maxLen = DefaultMaxLen
	}
	v, err := backlogScript.Run(ctx, rdb, []string{StreamKey, SinkMarkerKey, RejectedKey}, SinkGroup).Int64Slice()
	if err != nil || len(v) != 4 {
		return Backlog{}, fmt.Errorf("read the backlog of %s: %v", StreamKey, err)
	}
	return Backlog{Sink: v[0] == 1, Length: v[1], Unacked: v[2], MaxLen: maxLen, Rejected: v[3]}, nil
}
