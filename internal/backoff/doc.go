// Package backoff waits between retries: Sleep waits a duration unless
// the context ends first, and a Backoff's waits double from a first one
// up to a cap, for a loop that retries until it succeeds or gives up.
package backoff
