package site

import (
	"context"
	"errors"
)

// Locate finds the URL that serves a request whose host Build can only
// guess (Wildberries' basket CDN: a table gives the host, and new hosts
// open past its end). It asks candidate URLs through probe, in order,
// keeps what it learns in mem for the whole cluster, and returns the URL
// whose answer is the page; the job then parses the answer probe got.
// It returns ErrNotLocated when every candidate answered "not found",
// and probe's error, unchanged or wrapped, when probe stops it.
type Locate func(ctx context.Context, s *Site, r Request, mem Memory, probe Probe) (string, error)

// Probe asks url through the job's session (paced, through its proxy,
// judged like any page of the kind). found is true when the answer is
// the page; false with a nil error when it is "not found" there, so the
// next candidate may be asked. Any other answer is an error: the locator
// stops, and the job acts on that answer as on any page's.
type Probe func(ctx context.Context, url string) (found bool, err error)

// Memory is what a Locate keeps for the whole cluster: string fields to
// string values (the worker keeps it in a Redis hash per site and kind).
type Memory interface {
	// Recall returns the value kept for field; ok is false when none is.
	Recall(ctx context.Context, field string) (value string, ok bool, err error)
	// Remember keeps value for field.
	Remember(ctx context.Context, field, value string) error
}

// ErrNotLocated: every candidate a Locate asked answered "not found".
var ErrNotLocated = errors.New("no candidate host has the page")
