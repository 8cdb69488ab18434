package web

import (
	"context"
	"fmt"
	"io"

	"crawlq/proxies"
)

// waitLiner is a broker that keeps wait lines for the jobs waiting for a
// proxy (proxies.RedisBroker.WaitLines).
type waitLiner interface {
	WaitLines(ctx context.Context, sites map[string][]proxies.Class) ([]proxies.LineStats, error)
}

var _ waitLiner = (*proxies.RedisBroker)(nil)

// waitLines reads the wait lines of every site and class of the pool;
// nil when the broker keeps none or they cannot be read (the status
// shows the rest).
func waitLines(ctx context.Context, b proxies.Broker, sites map[string]proxies.SiteStats) []proxies.LineStats {
	wl, ok := b.(waitLiner)
	if !ok {
		return nil
	}
	pairs := map[string][]proxies.Class{}
	for site, st := range sites {
		for class := range st.ByClass {
			pairs[site] = append(pairs[site], class)
		}
	}
	lines, err := wl.WaitLines(ctx, pairs)
	if err != nil {
		return nil
	}
	return lines
}

// writeWaits says, per site and class with jobs waiting for a proxy,
// about how many wait their turns and how long a job joining them waits.
func (s *Status) writeWaits(w io.Writer) {
	for _, l := range s.Waits {
		fmt.Fprintf(w, "WAITING %s (%s): about %d jobs wait their turns for a proxy (handed back, no retry used); a job now waits %.0fs\n",
			l.Site, l.Class, l.Waiting, l.AheadS)
	}
}
