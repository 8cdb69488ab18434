package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RejectedKey counts the stream entries the sink group acknowledged as
// rejected: entries that could not become a row and were kept in the
// sink's rejected table instead. It carries {jobs}: Ack updates it in the
// script that acknowledges them.
const RejectedKey = StreamKey + ":rejected"

// ackScript acknowledges a batch's entries and counts the rejected ones
// it acknowledged (an entry acknowledged before, by a sink it was claimed
// from, is not counted again).
//
// KEYS[1] the stream, KEYS[2] the rejected counter.
// ARGV[1] the group, ARGV[2] how many of the IDs that follow are
// rejected entries (they come first), ARGV[3..] the entry IDs.
// Returns {entries acknowledged, rejected entries acknowledged}.
var ackScript = redis.NewScript(`
local function ack(from, to)
  local n = 0
  for i = from, to, 1000 do
    n = n + redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, i, math.min(i + 999, to)))
  end
  return n
end
local nrej = tonumber(ARGV[2])
local rej = ack(3, 2 + nrej)
local rest = ack(3 + nrej, #ARGV)
if rej > 0 then redis.call('INCRBY', KEYS[2], rej) end
return {rej + rest, rej}
`)

// Acked is what Ack acknowledged.
type Acked struct {
	// Entries is every entry acknowledged; Rejected those of them that
	// were rejected.
	Entries, Rejected int64
}

// Ack acknowledges entries (rows written) and rejected (kept as rejected)
// for the sink group in one script, and adds the rejected ones it
// acknowledged to RejectedKey.
func Ack(ctx context.Context, rdb redis.UniversalClient, entries, rejected []string) (Acked, error) {
	if len(entries)+len(rejected) == 0 {
		return Acked{}, nil
	}
	args := make([]any, 0, 2+len(entries)+len(rejected))
	args = append(args, SinkGroup, len(rejected))
	for _, id := range rejected {
		args = append(args, id)
	}
	for _, id := range entries {
		args = append(args, id)
	}
	v, err := ackScript.Run(ctx, rdb, []string{StreamKey, RejectedKey}, args...).Int64Slice()
	if err != nil || len(v) != 2 {
		return Acked{}, fmt.Errorf("acknowledge %d entries of %s: %v", len(entries)+len(rejected), StreamKey, err)
	}
	return Acked{Entries: v[0], Rejected: v[1]}, nil
}

// removeIdleScript removes the sink group's consumers that have been idle
// at least ARGV[2] ms and hold no pending entry, in one script, so no
// entry is delivered to one between the look and the removal (removing a
// consumer drops its pending entries from the group).
//
// KEYS[1] the stream. ARGV[1] the group, ARGV[2] the idle time in ms.
// Returns the names of the consumers removed.
var removeIdleScript = redis.NewScript(groupInfo + `
if not groupOf(KEYS[1], ARGV[1]) then return {} end
local gone = {}
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i+1] end
  if f['pending'] == 0 and f['idle'] >= tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    gone[#gone+1] = f['name']
  end
end
return gone
`)

// RemoveIdleConsumers removes the sink group's consumers idle for at
// least idle with nothing pending (sinks that stopped) and returns their
// names. A consumer holding pending entries stays: its
// entries are claimed (XAUTOCLAIM) and it goes at a later start.
func RemoveIdleConsumers(ctx context.Context, rdb redis.UniversalClient, idle time.Duration) ([]string, error) {
	names, err := removeIdleScript.Run(ctx, rdb, []string{StreamKey}, SinkGroup, idle.Milliseconds()).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("remove idle consumers of %s: %w", SinkGroup, err)
	}
	return names, nil
}
