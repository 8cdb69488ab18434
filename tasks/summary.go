package tasks

import (
	"context"
	"encoding/json"

	"github.com/hibiken/asynq"

	"crawlq/detect"
)

// Summary is a job's result, written with Asynq's ResultWriter and shown in
// the web UI: what the attempt did, with no secrets in it.
type Summary struct {
	Task    string `json:"task"`
	Site    string `json:"site"`
	Kind    string `json:"kind"`
	Attempt int    `json:"attempt"`
	// Pages is the number of pages done so far, over all attempts.
	Pages int `json:"pages"`
	// Items is the number of items written so far, over all attempts.
	Items int `json:"items"`
	// Followed and Duplicates count the follow-up jobs enqueued and refused
	// as already queued.
	Followed   int `json:"followed,omitempty"`
	Duplicates int `json:"duplicates,omitempty"`
	// ProxyID and Proxy name the last proxy used, credentials masked.
	ProxyID  string         `json:"proxy_id,omitempty"`
	Proxy    string         `json:"proxy,omitempty"`
	Resumed  bool           `json:"resumed,omitempty"`
	Verdicts map[string]int `json:"verdicts"`
	Error    string         `json:"error,omitempty"`
	// Empty is set when the job completed with no items: a true "no
	// results" answer (confirmed from a second proxy when ambiguous).
	Empty bool `json:"empty,omitempty"`
	// Answer is the Redis key of the copy of the answer the job failed on
	// when it was not of the site's own shape (ErrUnknownShape).
	Answer string `json:"answer,omitempty"`
	// Redirects counts the site's redirect stubs this attempt followed
	// (once per page) to the URL they named.
	Redirects int `json:"redirects,omitempty"`
	// Confirmations counts the Suspect answers of this attempt asked once
	// more from a second proxy; SoftBans those the second proxy
	// contradicted (the first proxy was quarantined).
	Confirmations int `json:"confirmations,omitempty"`
	SoftBans      int `json:"soft_bans,omitempty"`
	// Deferred counts the confirmations of this attempt that found no
	// second proxy free in time: the answer was kept for the next attempt.
	Deferred int `json:"confirmations_deferred,omitempty"`
	// Challenges counts the JavaScript challenges of this attempt the
	// browser was sent to clear, ChallengesSolved those it cleared, and
	// BrowserRequests the requests the browser sent (all paced as the
	// session's, through its proxy).
	Challenges       int `json:"challenges,omitempty"`
	ChallengesSolved int `json:"challenges_solved,omitempty"`
	BrowserRequests  int `json:"browser_requests,omitempty"`
	// ProofsOfWork counts the challenges this attempt solved over HTTP
	// with the site's own Solve (Avito's proof of work), no browser.
	ProofsOfWork int `json:"proofs_of_work,omitempty"`
	// ClearancesReused counts challenges met with the clearance another
	// session of the same proxy got (no browser visit).
	ClearancesReused int `json:"clearances_reused,omitempty"`
	// ClearancesRefused counts kept clearances the site challenged
	// anyway: they were dropped (and their broker marks) and the
	// challenge cleared anew.
	ClearancesRefused int `json:"clearances_refused,omitempty"`
}

func (s *Summary) count(v detect.Verdict) {
	if s.Verdicts == nil {
		s.Verdicts = map[string]int{}
	}
	s.Verdicts[v.Kind.String()]++
}

// write stores the summary as the task's result (best effort: a result
// that cannot be written does not fail the job).
func (s *Summary) write(ctx context.Context, t *asynq.Task) {
	raw, err := json.Marshal(s)
	if err != nil || t.ResultWriter() == nil {
		return
	}
	_, _ = t.ResultWriter().Write(raw)
}
