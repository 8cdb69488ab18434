// Package schedule owns crawlq's schedules: named sets of crawl jobs queued
// again on a cron spec (price monitoring). Schedules live in Redis under one
// hash tag; Run reads them every few seconds, so an added, removed, paused
// or resumed schedule applies without a restart, and fires each at its
// next tick (loop.go): "@every D" ticks on the multiples of D since the
// Unix epoch, so every scheduler fires a tick at the same time, the NEXT
// that `schedule list` shows.
//
// Each tick's jobs get task IDs derived from (schedule, tick time), so any
// number of schedulers running for availability queue a tick once. A tick
// whose previous run is still going (a job of it, or a follow-up job it
// queued, neither completed nor archived) is skipped and counted: a
// schedule never piles up.
package schedule
