// Package heartbeat keeps one small record per running crawlq process in
// Redis: for each `crawlq worker` its --server-id, host, pid, version,
// start time and the ID of the Asynq server it runs; for each `crawlq
// scheduler` and `crawlq sink` (its role) its name, host, pid, version
// and start time. A record expires by itself when its process stops
// refreshing it, so `crawlq status` and the dashboard name live servers
// by their --server-id, and say when no scheduler or sink is running.
package heartbeat
