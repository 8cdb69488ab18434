package site

import (
	"errors"
	"fmt"
)

// Sentinel errors; check with errors.Is.
var (
	// ErrUnknownSite: no site of that name is registered.
	ErrUnknownSite = errors.New("unknown site")
	// ErrUnknownKind: the site has no kind of that name.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrBadRequest: a Request failed validation (see *RequestError).
	ErrBadRequest = errors.New("bad request")
	// ErrBadBody: the body cannot be parsed at all (too large, not UTF-8,
	// compressed, truncated or malformed JSON).
	ErrBadBody = errors.New("bad body")
	// ErrUnrecognized: the body parsed but has none of the expected
	// structure (no product list, no product card): a block page, a
	// changed layout or the wrong kind.
	ErrUnrecognized = errors.New("page not recognized")
)

// RequestError is a bad Request: which field and why.
type RequestError struct {
	Site, Kind, Field, Reason string
}

// Error implements error.
func (e *RequestError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Site, e.Kind, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBadRequest) true.
func (e *RequestError) Unwrap() error { return ErrBadRequest }

// ParseError is a page that could not be parsed; Err wraps ErrBadBody or
// ErrUnrecognized.
type ParseError struct {
	Site, Kind, URL string
	Err             error
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("parse %s %s: %v", e.Site, e.Kind, e.Err)
	}
	return fmt.Sprintf("parse %s %s %s: %v", e.Site, e.Kind, e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// ConfigError is a bad value in the sites configuration; Field is its YAML
// path, such as "sites.ozon.min_interval".
type ConfigError struct {
	Field, Reason string
}

// Error implements error.
func (e *ConfigError) Error() string { return e.Field + ": " + e.Reason }

// Unrecognized returns an error wrapping ErrUnrecognized with a reason.
func Unrecognized(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnrecognized}, args...)...)
}

// BadBody returns an error wrapping ErrBadBody with a reason.
func BadBody(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadBody}, args...)...)
}

// RedirectError is the site's redirect stub: instead of the page, an
// answer that names the URL whose page the user asked for (Avito's
// {"redirected": true, "url": …} page state). The job follows it once;
// as a page it is never a result, so it wraps ErrUnrecognized.
type RedirectError struct {
	// To is the URL the stub names, as it is written (often a path).
	To string
	// What says what the stub stood in for ("a results page").
	What string
}

// Error implements error.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("%v: redirect stub to %q, not %s", ErrUnrecognized, e.To, e.What)
}

// Unwrap makes errors.Is(err, ErrUnrecognized) true.
func (e *RedirectError) Unwrap() error { return ErrUnrecognized }

// Redirected returns the *RedirectError of a stub naming to instead of
// what.
func Redirected(to, what string) error { return &RedirectError{To: to, What: what} }
