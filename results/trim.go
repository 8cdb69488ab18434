package results

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// appendScript appends a page's items, trimming by MAXLEN only when no
// sink marked the stream.
//
// KEYS[1] the stream, KEYS[2] the sink marker.
// ARGV[1] MAXLEN bound, ARGV[2] task ID, ARGV[3] schedule ("" for none),
// then ARGV[4+2i] an item's site and ARGV[5+2i] its JSON.
// Returns 1 when a sink marked the stream, else 0.
const appendScript = `
local sink = redis.call('EXISTS', KEYS[2]) == 1
for i = 4, #ARGV, 2 do
  local f = {'site', ARGV[i], 'task', ARGV[2]}
  if ARGV[3] ~= '' then f[#f+1] = 'schedule'; f[#f+1] = ARGV[3] end
  f[#f+1] = 'item'; f[#f+1] = ARGV[i+1]
  if sink then
    redis.call('XADD', KEYS[1], '*', unpack(f))
  else
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(f))
  end
end
if sink then return 1 end
return 0
`

// groupInfo (Lua) finds a group's last delivered ID in XINFO GROUPS; nil
// when the stream has no such group.
const groupInfo = `
local function groupOf(stream, name)
  if redis.call('EXISTS', stream) == 0 then return nil end
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local f = {}
    for i = 1, #g, 2 do f[g[i]] = g[i+1] end
    if f['name'] == name then return f end
  end
  return nil
end
`

// trimScript trims the stream to the group's oldest unacknowledged entry:
// its oldest pending one, or, with none pending, the first after the last
// delivered. Atomic, so an entry delivered meanwhile is never cut.
//
// KEYS[1] the stream. ARGV[1] the group.
// Returns the number of entries removed, or -1 without the group.
var trimScript = redis.NewScript(groupInfo + `
local g = groupOf(KEYS[1], ARGV[1])
if not g then return -1 end
local p = redis.call('XPENDING', KEYS[1], ARGV[1])
local min
if p[1] > 0 then
  min = p[2]
else
  local ms, seq = string.match(g['last-delivered-id'], '^(%d+)-(%d+)$')
  min = ms .. '-' .. string.format('%d', tonumber(seq) + 1)
end
return redis.call('XTRIM', KEYS[1], 'MINID', '~', min)
`)

// backlogScript reads the stream's length and, when a sink marked it, the
// entries its group has not acknowledged: pending plus not yet delivered
// (the group's lag; the stream's length when Redis cannot tell it).
//
// KEYS[1] the stream, KEYS[2] the sink marker, KEYS[3] the rejected
// counter. ARGV[1] the group.
// Returns {marked (0/1), length, unacknowledged, rejected}.
var backlogScript = redis.NewScript(groupInfo + `
local n = redis.call('XLEN', KEYS[1])
local rej = tonumber(redis.call('GET', KEYS[3]) or '0')
if redis.call('EXISTS', KEYS[2]) == 0 then return {0, n, 0, rej} end
local g = groupOf(KEYS[1], ARGV[1])
if not g then return {1, n, n, rej} end
local lag = g['lag']
if type(lag) ~= 'number' then return {1, n, n, rej} end
return {1, n, g['pending'] + lag, rej}
`)

// MarkSink creates the sink's consumer group, from the stream's first
// entry, and marks the stream as drained by it. The marker comes first, so
// no page trims by MAXLEN once the group exists.
func MarkSink(ctx context.Context, rdb redis.UniversalClient) error {
	if err := rdb.Set(ctx, SinkMarkerKey, SinkGroup, 0).Err(); err != nil {
		return fmt.Errorf("mark %s: %w", StreamKey, err)
	}
	err := rdb.XGroupCreateMkStream(ctx, StreamKey, SinkGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
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

func isNoGroup(err error) bool {
	return errors.Is(err, redis.Nil) || strings.Contains(err.Error(), "no such key") ||
		strings.Contains(err.Error(), "NOGROUP")
}

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
