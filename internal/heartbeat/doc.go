// Package heartbeat keeps one small record per running `crawlq worker` in
// Redis: its --server-id, host, pid, version, start time and the ID of the
// Asynq server it runs. A record expires by itself when its worker stops
// refreshing it, so `crawlq status` and the dashboard name live servers by
// their --server-id.
package heartbeat
