package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"text/tabwriter"
	"time"
)

// How a demo ended.
const (
	// EndDone: every job finished before the duration passed.
	EndDone = "done"
	// EndDuration: the duration passed first; unfinished jobs were left.
	EndDuration = "duration"
	// EndInterrupted: the caller's context ended (Ctrl-C).
	EndInterrupted = "interrupted"
)

// Summary is what a demo did. Its JSON form starts with the keys `crawlq
// demo --json` promises: jobs, completed, failed, pages, items, bans,
// i1_violations, i2_violations.
type Summary struct {
	// Observations are the rows the demo's sink wrote to PostgreSQL
	// (with --postgres; absent without).
	Observations *int64 `json:"observations_written,omitempty"`
	// Jobs counts every job that reached a site queue, followed ones too.
	Jobs      int `json:"jobs"`
	Completed int `json:"completed"`
	// Failed jobs were archived (out of retries or permanently bad).
	Failed int `json:"failed"`
	// Pages are the requests the sites served normally (testbed log).
	Pages int `json:"pages"`
	// Items are distinct items (site, ID) in the results stream.
	Items int `json:"items"`
	// Bans are the bans the sites started (the testbed's BansPerIP summed):
	// what a too-fast or cross-site IP gets.
	Bans int `json:"bans"`
	// I1Violations and I2Violations come from the testbed's log checker.
	I1Violations int `json:"i1_violations"`
	I2Violations int `json:"i2_violations"`
	// Unfinished jobs were still queued, running or retrying at the end.
	Unfinished int `json:"unfinished"`
	// Blocked are the requests the sites refused (any anti-bot verdict).
	Blocked int `json:"blocked"`
	// FailedAttempts are job attempts that failed and were retried or
	// archived (Asynq's failed counter): dead and flaky proxies show here.
	FailedAttempts int `json:"failed_attempts"`
	// ProxyFailures are the broker's failure counters summed: leases
	// released after a connection to the proxy failed.
	ProxyFailures int64 `json:"proxy_failures"`
	// BrokerBans are the quarantines the workers' ban verdicts put on
	// proxies (the broker's banned counters summed).
	BrokerBans int64 `json:"broker_bans"`
	// FingerprintRefusals are the requests the HTTPS sites refused because
	// their TLS or HTTP/2 fingerprint was not the browser the User-Agent
	// claims. Goal: 0.
	FingerprintRefusals int `json:"fingerprint_refusals"`
	// HeaderRefusals are the requests the sites refused because their
	// headers were not those the claimed browser sends for the request's
	// kind, by the testbed's reason.
	HeaderRefusals map[string]int `json:"header_refusals"`
	// Failures are the failed jobs' last errors, by task ID.
	Failures map[string]string `json:"failures,omitempty"`
	// HTTPSRequests are the logged requests that came over TLS.
	HTTPSRequests int `json:"https_requests"`
	// Requests is the number of site requests the testbed logged.
	Requests int `json:"requests"`
	// FalseQuarantines are quarantines of a proxy on a site that never
	// banned its IP; MissedSoftBans are soft-banned answers the workers
	// took as true results (no quarantine followed). Both are measured
	// against the testbed's truth and are 0 when ban handling is right.
	FalseQuarantines int64 `json:"false_quarantines"`
	MissedSoftBans   int   `json:"missed_soft_bans"`
	// NoResultJobs are the mix's searches for queries that match nothing;
	// EmptyJobs the jobs that completed with no items.
	NoResultJobs int `json:"no_result_jobs"`
	EmptyJobs    int `json:"empty_jobs"`
	// NoResultAnswers are the sites' answers that truly had no items;
	// SoftBannedAnswers those whose items a soft ban hid.
	NoResultAnswers   int `json:"no_result_answers"`
	SoftBannedAnswers int `json:"soft_banned_answers"`
	// Confirmations are the Suspect answers asked once more from a second
	// proxy, by decision; ConfirmRequests the extra requests they sent
	// (one each, more when a second proxy failed in transport), and
	// ConfirmShare their share of all site requests: the cost of
	// confirming.
	Confirmations    int            `json:"confirmations"`
	ConfirmDecisions map[string]int `json:"confirm_decisions,omitempty"`
	ConfirmRequests  int            `json:"confirm_requests"`
	ConfirmShare     float64        `json:"confirm_share"`
	// WitnessBans are the confirmations' witnesses quarantined because
	// the site's control came back empty from them (issue 36.8): each
	// such control answer is a soft-banned answer the confirmation
	// handled, with no confirmation of its own.
	WitnessBans int `json:"witness_bans"`
	// The JavaScript challenges and what clearing them cost.
	ChallengeSummary
	// Gateway is what the gateway beside the farm did; absent without one.
	Gateway *GatewaySummary `json:"gateway,omitempty"`
	// Modems is what the modems beside the farm did; absent without.
	Modems *ModemSummary `json:"modems,omitempty"`
	// Sites breaks the counts down per site.
	Sites map[string]SiteSummary `json:"sites"`
	// End is EndDone, EndDuration or EndInterrupted.
	End string `json:"end"`
	// Elapsed is the time from the first enqueue to the last count.
	Elapsed time.Duration `json:"-"`
	// ElapsedSeconds is Elapsed in seconds, for the JSON line.
	ElapsedSeconds float64 `json:"elapsed_s"`
	// Workers, Proxies, Dead and Flaky describe the cluster.
	Workers int `json:"workers"`
	Proxies int `json:"proxies"`
	Dead    int `json:"dead_proxies"`
	Flaky   int `json:"flaky_proxies"`
	// Dashboard is the dashboard's URL, if it ran.
	Dashboard string `json:"dashboard,omitempty"`
}

// SiteSummary is one site's part of a Summary; its counts mean what the
// Summary's fields of the same names mean.
type SiteSummary struct {
	Jobs       int `json:"jobs"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Unfinished int `json:"unfinished"`
	Pages      int `json:"pages"`
	Items      int `json:"items"`
	Bans       int `json:"bans"`
	Blocked    int `json:"blocked"`
	// FingerprintRefusals counts the site's fingerprint refusals.
	FingerprintRefusals int `json:"fingerprint_refusals"`
	// FailedAttempts counts the site's failed job attempts.
	FailedAttempts int `json:"failed_attempts"`
	// MinInterval is the broker's pacing of one proxy on the site and
	// SiteLimit the testbed's per-IP limit it must respect.
	MinInterval time.Duration `json:"-"`
	SiteLimit   time.Duration `json:"-"`
}

func (s *SiteSummary) add(o SiteSummary) {
	s.Jobs += o.Jobs
	s.Completed += o.Completed
	s.Failed += o.Failed
	s.Unfinished += o.Unfinished
	s.Pages += o.Pages
	s.Items += o.Items
	s.Bans += o.Bans
	s.Blocked += o.Blocked
	s.FingerprintRefusals += o.FingerprintRefusals
	s.FailedAttempts += o.FailedAttempts
}

// WriteJSON writes the summary as one JSON line.
func (s *Summary) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(s)
}

// WriteText writes the summary for people: a headline, a table per site,
// the invariants and the bans.
func (s *Summary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "crawlq demo: %s in %s — %d workers, %d proxies (%d dead, %d flaky)\n",
		s.headline(), s.Elapsed.Round(100*time.Millisecond), s.Workers, s.Proxies, s.Dead, s.Flaky)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "site\tjobs\tcompleted\tfailed\tunfinished\tretried\tpages\titems\tblocked\tbans\tmin_interval\tsite limit\t")
	for _, name := range s.siteNames() {
		st := s.Sites[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", name, st.Jobs, st.Completed, st.Failed,
			st.Unfinished, st.FailedAttempts, st.Pages, st.Items, st.Blocked, st.Bans, st.MinInterval, st.SiteLimit)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\t\t\n", s.Jobs, s.Completed, s.Failed,
		s.Unfinished, s.FailedAttempts, s.Pages, s.Items, s.Blocked, s.Bans)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "invariants (testbed log, %d requests): I1 exclusive %s, I2 polite %s\n",
		s.Requests, verdict(s.I1Violations), verdict(s.I2Violations))
	fmt.Fprintf(w, "fingerprints (checked on %d HTTPS requests): %d refused as not the browser their User-Agent claims\n",
		s.HTTPSRequests, s.FingerprintRefusals)
	s.writeHeaderRefusals(w)
	for _, id := range slices.Sorted(maps.Keys(s.Failures)) {
		fmt.Fprintf(w, "failed job %s: %s\n", id, s.Failures[id])
	}
	fmt.Fprintf(w, "bans: %d started by the sites; %d proxy quarantines from the workers' ban verdicts\n", s.Bans, s.BrokerBans)
	fmt.Fprintf(w, "faulty proxies: %d failed job attempts retried elsewhere, %d proxy failures counted by the broker\n",
		s.FailedAttempts, s.ProxyFailures)
	s.writeGateway(w)
	s.writeModems(w)
	s.writeBanHandling(w)
	s.writeChallenges(w)
	if s.Observations != nil {
		fmt.Fprintf(w, "sink: %d observations written to PostgreSQL\n", *s.Observations)
	}
	if s.Dashboard != "" {
		fmt.Fprintf(w, "dashboard was at %s\n", s.Dashboard)
	}
	return nil
}

func (s *Summary) headline() string {
	switch s.End {
	case EndDone:
		return fmt.Sprintf("all %d jobs finished", s.Jobs)
	case EndInterrupted:
		return fmt.Sprintf("interrupted, %d of %d jobs finished", s.Completed+s.Failed, s.Jobs)
	}
	return fmt.Sprintf("duration over, %d of %d jobs finished", s.Completed+s.Failed, s.Jobs)
}

func (s *Summary) siteNames() []string {
	names := make([]string, 0, len(s.Sites))
	for name := range s.Sites {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func verdict(n int) string {
	if n == 0 {
		return "held (0 violations)"
	}
	return fmt.Sprintf("BROKEN (%d violations)", n)
}

// writeBanHandling writes the empty results, the soft bans and the cost
// of confirming ambiguous answers.
func (s *Summary) writeBanHandling(w io.Writer) {
	fmt.Fprintf(w, "empty results: %d completed, %d of them empty (%d no-result jobs in the mix, %d empty answers)\n",
		s.Completed, s.EmptyJobs, s.NoResultJobs, s.NoResultAnswers)
	fmt.Fprintf(w, "soft bans: %d soft-banned answers; false quarantines %d, missed soft bans %d\n",
		s.SoftBannedAnswers, s.FalseQuarantines, s.MissedSoftBans)
	fmt.Fprintf(w, "confirmations: %d ambiguous answers asked again from a second proxy (%d agreed, %d contradicted, %d undecided): %d extra requests, %.1f%% of %d\n",
		s.Confirmations, s.ConfirmDecisions["agreed"], s.ConfirmDecisions["contradicted"], s.ConfirmDecisions["undecided"],
		s.ConfirmRequests, s.ConfirmShare*100, s.Requests)
}

// writeChallenges writes what the JavaScript challenges cost.
func (s *Summary) writeChallenges(w io.Writer) {
	if !s.ChallengeMode {
		fmt.Fprintln(w, "challenges: off (no chromium found; install it, or give --chrome PATH)")
		return
	}
	fmt.Fprintf(w, "challenges: %d cleared by the browser of %d (%d more met with a kept clearance); %d challenge answers served, %d cookies misused\n",
		s.ChallengesSolved, s.Challenges, s.ClearancesReused, s.ChallengePages, s.CookiesMisused)
	fmt.Fprintf(w, "proof of work (avito 439): %d solved over HTTP, %d failed, mean %.1f ms; avito quarantines %d, proxies last banned for a 439 %d\n",
		s.PoWSolved, s.PoWFailed, s.PoWMeanMS, s.AvitoQuarantines, s.Quarantines439)
	fmt.Fprintf(w, "browser: %d requests through the sessions' proxies, %.1f%% of all requests over HTTP; largest browser %.0f MB; %d visits lost to a dropped proxy connection (retried elsewhere)\n",
		s.BrowserRequests, s.HTTPShare*100, s.BrowserRSSMB, s.BrowserProxyFailures)
	if len(s.PerVisit) > 0 {
		fmt.Fprint(w, "browser requests per visit, by kind (site and CDN hosts):")
		for _, kind := range slices.Sorted(maps.Keys(s.PerVisit)) {
			fmt.Fprintf(w, " %s %.2f", kind, s.PerVisit[kind])
		}
		fmt.Fprintln(w)
	}
}

// writeHeaderRefusals prints how many requests the sites refused for
// their headers, with the testbed's reasons.
func (s *Summary) writeHeaderRefusals(w io.Writer) {
	n := 0
	for _, c := range s.HeaderRefusals {
		n += c
	}
	fmt.Fprintf(w, "headers (checked per claimed browser and request kind): %d refused\n", n)
	for _, why := range slices.Sorted(maps.Keys(s.HeaderRefusals)) {
		fmt.Fprintf(w, "  %d× %s\n", s.HeaderRefusals[why], why)
	}
}
