// Package sessions makes one scrape job look like one user: a sticky proxy
// lease, one cookie jar and one header profile for the whole job, paced so
// the proxy never sends to the site faster than the site's min_interval
// (I2). A session is stored in Redis under the task's ID, so a retry of the
// same task on another server resumes the same proxy and cookies.
//
// Sessions keep their lease alive while open, score their own health
// (Crawlee-style: a bad response adds 1, a good one takes 0.5 off) and
// retire at a score of 3, a maximum usage or a maximum age. Outcome maps a
// detect verdict to the broker action; it is the one place that mapping
// lives.
//
// A session opens one way, Manager.OpenStored (Open is it with nothing
// preloaded): the task's stored record (read in the caller's pipeline by
// Preload, else read then), its proxy (leased by name to resume the
// record, else a fresh one: a lease Preload queued, or the first to come
// free) and the Session. Whether sessions share the caller's Redis, and
// so are stored in its transactions (Config.SharesRedis), and whether the
// broker keeps its leases there too (Config.BrokerSharesRedis), is set
// when the Manager is built, and so are the broker's capabilities
// (Config.Caps) and the worker's modem Rotator (Config.Rotator), which
// runs each modem's change of IP from a session's ban to the new IP
// stored (rotator.go).
//
// A request goes out in two steps: Pace only waits for its turn; admit
// then decides about it (a gateway exit learned again, a modem's budget
// counted or the session ended), just before it is sent.
package sessions
