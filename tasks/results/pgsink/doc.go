// Package pgsink is the durable store of results in PostgreSQL: `crawlq
// sink` drains the results stream through a consumer group (sink.go) into
// two tables (migrations/): items, the latest state of every (site, id)
// with its first and last sighting, and observations, one row per stream
// entry (the price history), keyed by the entry's ID so a redelivered entry
// adds nothing. Entries are acknowledged only after their rows committed.
// query.go reads it back: export, an item's prices, recent price changes.
package pgsink
