package chaos

import (
	"context"
	"regexp"
	"time"

	"go.uber.org/zap"
)

// minIntervalLine is a site's min_interval line of the testbed's crawlq
// config: the pace crawlq is told, then the testbed's rule.
var minIntervalLine = regexp.MustCompile(`(?m)^    min_interval: (\S+)   # the testbed punishes an IP faster than (\S+)$`)

// withLearnedPace gives every site of cfg min_interval auto, from twice
// the pace it was told down to the testbed's rule: the learner runs
// under every fault, and never below the rule I2 is checked against.
func withLearnedPace(cfg []byte) []byte {
	return minIntervalLine.ReplaceAllFunc(cfg, func(line []byte) []byte {
		m := minIntervalLine.FindSubmatch(line)
		told, err := time.ParseDuration(string(m[1]))
		if err != nil {
			return line // not a duration: left as the testbed wrote it
		}
		return []byte("    min_interval: auto " + string(m[2]) + ".." + (2 * told).String() +
			"   # chaos: learned, never under the testbed's rule " + string(m[2]))
	})
}

// LearnedLimit is a learned limit at the end of a run: its value (ms of
// a pace, requests of a volume), how many times it changed and the last
// reason.
type LearnedLimit struct {
	Name    string `json:"name"`
	Value   int64  `json:"value"`
	Changes int64  `json:"changes"`
	Reason  string `json:"reason"`
}

// learnedLimits reads every learned limit of the broker's Redis; none
// when nothing is learned (or the read fails: the run's other figures
// stand).
func (c *cluster) learnedLimits(ctx context.Context) []LearnedLimit {
	if !c.o.LearnPace && !c.o.LearnVolume {
		return nil
	}
	ls, err := c.pool.Limits(ctx)
	if err != nil {
		c.log.Warn("learned limits", zap.Error(err))
		return nil
	}
	out := make([]LearnedLimit, 0, len(ls))
	for _, l := range ls {
		out = append(out, LearnedLimit{Name: l.Name, Value: l.Value, Changes: l.Gen - 1, Reason: l.Reason})
	}
	return out
}
