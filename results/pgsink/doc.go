// Package pgsink is the durable store of results in PostgreSQL: `crawlq
// sink` drains the results stream through a consumer group (sink.go) into
// two tables (migrations/): items, the latest state of every (site, id)
// with its first and last sighting, and observations, one row per stream
// entry (the price history), keyed by the entry's ID so a redelivered entry
// adds nothing. An entry that is not an item (not JSON, no id) goes to a
// third table, rejected, with its raw fields and why. Entries are
// acknowledged only after their rows committed. errors.go tells the
// failures retrying cannot mend (PermanentError) from those it can.
// query.go reads it back: export, an item's prices, recent price changes.
package pgsink
