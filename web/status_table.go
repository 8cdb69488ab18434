package web

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"crawlq/internal/heartbeat"
	"crawlq/proxies"
)

// WriteTable prints the snapshot as aligned tables: queues, pool per
// site, live servers and (when read) live schedulers and sinks.
func (s *Status) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	s.writeQueues(tw)
	fmt.Fprintln(tw)
	s.writePool(tw)
	fmt.Fprintln(tw)
	s.writeServers(tw)
	if s.Schedulers != nil || s.Sinks != nil {
		fmt.Fprintln(tw)
		s.writeProcesses(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s.writeResults(w)
	if len(s.Waits) > 0 {
		fmt.Fprintln(w)
		s.writeWaits(w)
	}
	return nil
}

// writeResults says what holds the results back: a worker paused for the
// sink's backlog, or a stream without a sink at its MAXLEN bound.
func (s *Status) writeResults(w io.Writer) {
	for _, v := range s.Servers {
		if v.Paused != "" {
			fmt.Fprintf(w, "\nPAUSED  %s: %s\n", dash(v.ServerID), v.Paused)
		}
	}
	r := s.Results
	switch {
	case r == nil:
	case r.Sink && s.Sinks != nil && len(s.Sinks) == 0:
		fmt.Fprintf(w, "\nWARNING results: %d entries in the stream, %d not yet in PostgreSQL, and no sink is running: "+
			"they wait, and workers pause at the backlog's bound (start `crawlq sink --postgres URL`)\n", r.Length, r.Unacked)
	case r.Sink:
		fmt.Fprintf(w, "\nresults: %d entries in the stream, %d not yet in PostgreSQL (sink)\n", r.Length, r.Unacked)
	case r.AtBound():
		fmt.Fprintf(w, "\nWARNING results: the stream is at its bound (%d of %d entries) and no sink drains it: "+
			"every new item pushes an old one out, exported or not (run `crawlq sink --postgres URL`)\n", r.Length, r.MaxLen)
	}
}

func (s *Status) writeQueues(w io.Writer) {
	fmt.Fprintln(w, "QUEUE\tPENDING\tACTIVE\tSCHEDULED\tRETRY\tARCHIVED\tCOMPLETED\tPROCESSED\tFAILED\tPAUSED")
	for _, q := range s.Queues {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%t\n", q.Queue, q.Pending, q.Active,
			q.Scheduled, q.Retry, q.Archived, q.Completed, q.Processed, q.Failed, q.Paused)
	}
	if len(s.Queues) == 0 {
		fmt.Fprintln(w, "(no queues yet)")
	}
}

func (s *Status) writePool(w io.Writer) {
	proxiesWord := "proxies"
	if s.Pool.Total == 1 {
		proxiesWord = "proxy"
	}
	fmt.Fprintf(w, "SITE\tREADY\tLEASED\tCOOLING\tQUARANTINED\tCLEARED\tEXHAUSTED\t(pool: %d %s)\n", s.Pool.Total, proxiesWord)
	for _, site := range sortedKeys(s.Pool.Sites) {
		st := s.Pool.Sites[site]
		ex := make([]string, len(st.Exhausted))
		for i, c := range st.Exhausted {
			ex[i] = string(c)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", site, st.Ready, st.Leased, st.Cooling,
			st.Quarantined, st.Cleared, dash(strings.Join(ex, ",")))
	}
	if len(s.Pool.Sites) == 0 {
		fmt.Fprintln(w, "(pool is empty: import proxies)")
	}
	// The exit-IP and modem lines have no tab: they end the table's
	// columns instead of widening its READY column to their length.
	for _, site := range sortedKeys(s.Pool.Sites) {
		if x := s.Pool.Sites[site].Exits; x != nil {
			fmt.Fprintf(w, "%s exit IPs: %d held, %d quarantined, %d seen\n", site, x.Held, x.Quarantined, x.Seen)
		}
	}
	if m := s.Pool.Modems; m != nil {
		fmt.Fprintf(w, "modems: %s\n", ModemLine(m))
	}
	for _, l := range s.Pool.Limits {
		fmt.Fprintf(w, "learned %s\n", LimitLine(l))
	}
}

// ModemLine says in one line what the pool's modems did over the last
// 10 minutes: rotating now, rotations per minute, their time, and the
// requests a modem-hour bought.
func ModemLine(m *proxies.ModemStats) string {
	line := fmt.Sprintf("%d, %d rotating; %.1f rotations/min", m.Modems, m.Rotating, m.PerMinute)
	if m.Failed > 0 {
		line += fmt.Sprintf(" (%d failed: quarantined)", m.Failed)
	}
	if m.P50 > 0 {
		line += fmt.Sprintf(", rotation p50 %s p90 %s", m.P50.Round(100*time.Millisecond), m.P90.Round(100*time.Millisecond))
	}
	return line + fmt.Sprintf("; %.0f requests per modem-hour (10 min)", m.PerModemHour)
}

func (s *Status) writeServers(w io.Writer) {
	fmt.Fprintln(w, "SERVER\tHOST\tPID\tVERSION\tCONCURRENCY\tACTIVE\tQUEUES\tUP\tASYNQ ID")
	for _, v := range s.Servers {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", dash(v.ServerID), v.Host, v.PID, dash(v.Version), v.Concurrency,
			v.ActiveWorkers, queueWeights(v.Queues), s.At.Sub(v.Started).Round(time.Second), v.ID)
	}
	if len(s.Servers) == 0 {
		fmt.Fprintln(w, "(no live servers)")
	}
}

// writeProcesses lists the live schedulers and sinks, or says none runs.
func (s *Status) writeProcesses(w io.Writer) {
	fmt.Fprintln(w, "PROCESS\tID\tHOST\tPID\tVERSION\tUP")
	for _, p := range []struct {
		role string
		recs []heartbeat.Record
	}{{"scheduler", s.Schedulers}, {"sink", s.Sinks}} {
		for _, r := range p.recs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", p.role, r.ServerID, r.Host, r.PID, dash(r.Version),
				s.At.Sub(r.Started).Round(time.Second))
		}
	}
	if len(s.Schedulers) == 0 {
		fmt.Fprintln(w, "(no scheduler running: no schedule is queued; start `crawlq scheduler`)")
	}
	if len(s.Sinks) == 0 {
		fmt.Fprintln(w, "(no sink running: results stay in the Redis stream)")
	}
}

// queueWeights formats a server's queues as wildberries=3,ozon=2 sorted by name.
func queueWeights(q map[string]int) string {
	parts := make([]string, 0, len(q))
	for _, name := range sortedKeys(q) {
		parts = append(parts, fmt.Sprintf("%s=%d", name, q[name]))
	}
	return strings.Join(parts, ",")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
