package proxies

import (
	"context"
	"strings"
)

// LearnedLimit is a learned limit with its latest changes, newest first:
// what status, the dashboard and /metrics show of it.
type LearnedLimit struct {
	Limit
	Changes []LimitChange `json:"changes,omitempty"`
}

// LimitChangesShown is how many changes of each limit a pool summary
// carries (the dashboard's chart of it).
const LimitChangesShown = 100

// LearnedLimits is every learned limit of the pool, sorted by name, with
// its last n changes.
func (b *RedisBroker) LearnedLimits(ctx context.Context, n int) ([]LearnedLimit, error) {
	ls, err := b.Limits(ctx)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	out := make([]LearnedLimit, len(ls))
	for i, l := range ls {
		cs, err := b.LimitLog(ctx, l.Name, n)
		if err != nil {
			return nil, err
		}
		out[i] = LearnedLimit{Limit: l, Changes: cs}
	}
	return out, nil
}

// Kinds of a learned limit's change, from its reason.
const (
	ChangeStart   = "start"    // created at its start value
	ChangeFaster  = "faster"   // clean answers at a faster pace
	ChangeSlower  = "slower"   // a rate limit or ban
	ChangePinned  = "pinned"   // set and pinned by a user
	ChangeUnpin   = "unpinned" // freed by a user
	ChangeBounds  = "bounds"   // moved inside new bounds
	ChangeLearned = "learned"  // any other learner's change
)

// ChangeKind is the kind of a change with reason, for a chart's marks and
// a metric's label (a reason carries numbers; its kind does not).
func ChangeKind(reason string) string {
	switch {
	case reason == "start", reason == "bounds":
		return reason
	case strings.Contains(reason, "clean answers"):
		return ChangeFaster
	case strings.HasPrefix(reason, "429 at"), strings.HasPrefix(reason, "ban at"):
		return ChangeSlower
	case strings.HasPrefix(reason, "pinned"):
		return ChangePinned
	case strings.HasPrefix(reason, "unpinned"):
		return ChangeUnpin
	}
	return ChangeLearned
}
