// Package schedule owns crawlq's schedules: named sets of crawl jobs queued
// again on a cron spec (price monitoring). Schedules live in Redis under one
// hash tag; Run drives them with Asynq's PeriodicTaskManager, whose config
// provider reads them, so an added, removed, paused or resumed schedule
// applies without a restart.
//
// Each tick's jobs get task IDs derived from (schedule, tick time), so any
// number of schedulers running for availability queue a tick once. A tick
// whose previous run is still going (a job of it, or a follow-up job it
// queued, neither completed nor archived) is skipped and counted: a
// schedule never piles up.
package schedule
