package proxies

// keys builds every Redis key of one broker pool. All keys share the hash
// tag {pool}, so every script also runs on Redis Cluster.
type keys struct{ prefix string }

func newKeys(pool string) keys { return keys{prefix: "crawlq:{" + pool + "}:"} }

// proxies is a HASH id -> proxy spec (JSON, with credentials).
func (k keys) proxies() string { return k.prefix + "proxies" }

// classes is a HASH id -> class.
func (k keys) classes() string { return k.prefix + "classes" }

// version is a counter bumped by every import and remove; ready sets record
// the version they were built from.
func (k keys) version() string { return k.prefix + "version" }

// known is a HASH "site\tclass" -> version its ready set was synced at.
func (k keys) known() string { return k.prefix + "known" }

// token is the fencing token counter.
func (k keys) token() string { return k.prefix + "token" }

// ready is a ZSET id -> ready-at (ms, Redis clock) of one site and class.
func (k keys) ready(site string, c Class) string {
	return k.prefix + "ready:" + site + ":" + string(c)
}

// quarantine is a ZSET id -> quarantine end (ms) of one site and class.
func (k keys) quarantine(site string, c Class) string {
	return k.prefix + "quar:" + site + ":" + string(c)
}

// leases is a HASH id -> "token|expiry-ms|holder|task" of one site.
func (k keys) leases(site string) string { return k.prefix + "lease:" + site }

// busy is a HASH id -> "site|token|expiry-ms": exclusive mode's lease of a
// proxy across all sites.
func (k keys) busy() string { return k.prefix + "busy" }

// stats is a HASH of one site's per-proxy counters: "<id>|ok", "<id>|fail",
// "<id>|ban", "<id>|ewma" (ms), "<id>|streak" (bans since the last ok),
// "<id>|lastban", "<id>|lastbanat" (ms), "<id>|h|<holder>" (leases).
func (k keys) stats(site string) string { return k.prefix + "stats:" + site }

// knownField is the field of known for one site and class.
func knownField(site string, c Class) string { return site + "\t" + string(c) }
