package site

import (
	"context"
	"errors"
)

// Locate finds the URL that serves a request whose host Build can only
// guess (Wildberries' basket CDN: its upstream map or a table gives the
// host, and new hosts open past its end). It may read what the site
// publishes of its hosts through ask.Read, asks candidate URLs through
// ask.Probe, in order, keeps what it learns in mem for the whole
// cluster, and returns the URL whose answer is the page; the job then
// parses the answer the probe got. It returns ErrNotLocated when every
// candidate answered "not found", and ask's error, unchanged or
// wrapped, when an answer stops it.
type Locate func(ctx context.Context, s *Site, r Request, mem Memory, ask Ask) (string, error)

// Ask is how a Locate asks the site, through the job's session.
type Ask struct {
	Probe Probe
	Read  Read
}

// Read asks url through the job's session as Probe does and returns the
// answer's body when it is a page; found is false with a nil error when
// it is "not found" there. Any other answer is an error that stops the
// locator.
type Read func(ctx context.Context, url string) (body []byte, found bool, err error)

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
