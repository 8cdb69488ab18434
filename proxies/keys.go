package proxies

import "strconv"

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

// known is a HASH "site\tclass" -> version its ready set was synced at, or
// "" once an import or remove made it out of date.
func (k keys) known() string { return k.prefix + "known" }

// token is the fencing token counter.
func (k keys) token() string { return k.prefix + "token" }

// epoch is a HASH of the pool's failover epoch (failover.go): replid (the
// master's replication ID it was seen with), n (the epoch number), fence
// (ms until which new leases are refused).
func (k keys) epoch() string { return k.prefix + "epoch" }

// ready is a ZSET id -> ready-at (ms, Redis clock) of one site and class,
// plus the sync marker "#<version>" at -inf while the set is up to date
// (lua/lib/fresh.lua).
func (k keys) ready(site string, c Class) string {
	return k.prefix + "ready:" + site + ":" + string(c)
}

// quarantine is a ZSET id -> quarantine end (ms) of one site and class.
func (k keys) quarantine(site string, c Class) string {
	return k.prefix + "quar:" + site + ":" + string(c)
}

// cleared is a ZSET id -> end (ms, Redis clock) of the clearance of a
// site's JavaScript challenge the proxy holds (MarkCleared): a lease of
// the site takes these proxies first. Its members are proxies of the pool
// (Remove drops them: a mark follows a lease, so its site has a ready
// set Remove knows of); marks that ended are pruned lazily.
func (k keys) cleared(site string) string { return k.prefix + "cleared:" + site }

// leases is a HASH id -> "token|expiry-ms|holder|task" of one site.
func (k keys) leases(site string) string { return k.prefix + "lease:" + site }

// busy is a HASH id -> "site|token|expiry-ms": exclusive mode's lease of a
// proxy across all sites.
func (k keys) busy() string { return k.prefix + "busy" }

// stats is a HASH of one site's per-proxy counters: "<id>|ok", "<id>|fail",
// "<id>|ban", "<id>|ewma" (ms), "<id>|streak" (bans since the last ok),
// "<id>|lastban", "<id>|lastbanat" (ms), "<id>|h|<holder>" (leases of
// the holder, counted when they are released).
func (k keys) stats(site string) string { return k.prefix + "stats:" + site }

// exitHolds is a HASH ip -> "token|expiry-ms|holder" of one site: the
// exit IPs sessions hold (exit.go).
func (k keys) exitHolds(site string) string { return k.prefix + "exit:" + site }

// exitReady is a ZSET ip -> ready-at (ms) of one site: when an exit IP may
// send to the site again.
func (k keys) exitReady(site string) string { return k.prefix + "exitready:" + site }

// exitQuarantine is a ZSET ip -> quarantine end (ms) of one site.
func (k keys) exitQuarantine(site string) string { return k.prefix + "exitquar:" + site }

// exitSeen is a HyperLogLog of the exit IPs ever held for one site.
func (k keys) exitSeen(site string) string { return k.prefix + "exitseen:" + site }

// exitKeys are the exit scripts' KEYS: holds, ready, quarantine, and
// with hold the token counter and the seen HLL (exit_hold.lua).
func (k keys) exitKeys(site string, hold bool) []any {
	out := []any{k.exitHolds(site), k.exitReady(site), k.exitQuarantine(site)}
	if hold {
		out = append(out, k.token(), k.exitSeen(site))
	}
	return out
}

// rotating is a HASH id -> "token|deadline-ms|holder|start-ms|site": the
// modems changing their exit IP (modem_rotate.go); no set leases them
// before the deadline.
func (k keys) rotating() string { return k.prefix + "rotating" }

// modems is a SET of the pool's modems' ids (kept by Import and Remove).
func (k keys) modems() string { return k.prefix + "modems" }

// modemChanges is a HASH id -> ms of the modem's last accepted IP change,
// for the provider's least interval between two.
func (k keys) modemChanges() string { return k.prefix + "modemchg" }

// modemLog is a LIST of the last 1000 rotations, newest first:
// "end-ms|took-ms|ok 1/0|id".
func (k keys) modemLog() string { return k.prefix + "modemlog" }

// modemExits is a HASH id -> the modem's exit IP last learned.
func (k keys) modemExits() string { return k.prefix + "modemexit" }

// modemUse is a STRING "requests|first-ms": what an exit IP sent a site
// through modems (rotate_after, rotate_every), kept UseKept.
func (k keys) modemUse(site, ip string) string { return k.prefix + "modemuse:" + site + ":" + ip }

// modemSent is the count of requests sent through modems in one minute
// (Unix minute), kept 2 h.
func (k keys) modemSent(minute int64) string {
	return k.prefix + "modemsent:" + strconv.FormatInt(minute, 10)
}

// knownField is the field of known for one site and class.
func knownField(site string, c Class) string { return site + "\t" + string(c) }

// scArgs are the script keys and per-site constant arguments of one
// (site, class), built and boxed once so the lease path allocates no key
// strings.
type scArgs struct {
	lease   []any // leaseScript and leaseProxyScript KEYS
	release []any // releaseScript KEYS (busy only in exclusive mode)
	extend  []any // extendScript KEYS
	// field is the known field, site the site name, minInterval its
	// min_interval in ms, clearanceWait its clearance wait in ms.
	field, site, minInterval, clearanceWait any
	// failPolicy is ARGV[9..10] of releaseScript (fail penalty and its
	// cap, ms), banPolicy ARGV[12..14] (quarantine base, cap and floor).
	failPolicy, banPolicy []any
	sc                    SiteConfig
}

// argsOf returns the cached scArgs of (site, class).
func (b *RedisBroker) argsOf(site string, class Class) *scArgs {
	key := siteClass{site: site, class: class}
	b.mu.RLock()
	a := b.sets[key]
	b.mu.RUnlock()
	if a != nil {
		return a
	}
	a = b.newArgs(site, class)
	b.mu.Lock()
	b.sets[key] = a
	b.mu.Unlock()
	return a
}

func (b *RedisBroker) newArgs(site string, class Class) *scArgs {
	k, sc := b.k, b.cfg.site(site)
	ready, leases, quar := k.ready(site, class), k.leases(site), k.quarantine(site, class)
	a := &scArgs{
		lease:         []any{ready, leases, k.token(), k.proxies(), k.known(), quar, k.busy(), k.epoch(), k.cleared(site), k.rotating()},
		release:       []any{ready, leases, k.stats(site), quar},
		extend:        []any{ready, leases, k.busy()},
		field:         knownField(site, class),
		site:          site,
		minInterval:   sc.MinInterval.Milliseconds(),
		clearanceWait: sc.ClearanceWait.Milliseconds(),
		failPolicy:    []any{sc.FailPenalty.Milliseconds(), sc.FailPenaltyCap.Milliseconds()},
		banPolicy:     []any{sc.QuarantineBase.Milliseconds(), sc.QuarantineCap.Milliseconds(), sc.QuarantineFloor.Milliseconds()},
		sc:            sc,
	}
	if b.cfg.Mode == ModeExclusive {
		a.release = append(a.release, k.busy())
	}
	return a
}
