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

// slotExit is a HASH slot id -> exit IP of one site: the exit a gateway
// slot's last hold for the site was on (lua/lib/slotexit.lua).
func (k keys) slotExit(site string) string { return k.prefix + "slotexit:" + site }

// exitSlots is a HASH exit IP -> the gateway slots (ids separated by
// spaces) whose last hold for one site was on it: slotExit inverted.
func (k keys) exitSlots(site string) string { return k.prefix + "exitslots:" + site }

// slotDraw is a STRING of one site, set while a fresh gateway slot (no
// exit recorded) is leased to draw an exit, until its first hold or its
// expiry (lua/lib/slotexit.lua).
func (k keys) slotDraw(site string) string { return k.prefix + "slotdraw:" + site }

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
// for its volume budget (rotate_after, rotate_every), through modems or
// proxies that rest (volume.go), kept UseKept or rotate_every.
func (k keys) modemUse(site, ip string) string { return k.prefix + "modemuse:" + site + ":" + ip }

// modemSent is the count of requests sent through modems in one minute
// (Unix minute), kept 2 h.
func (k keys) modemSent(minute int64) string {
	return k.prefix + "modemsent:" + strconv.FormatInt(minute, 10)
}

// limit is a HASH of one learned limit (limit.go): value, min, max,
// unit, pinned, at, reason, gen, and its learner's own fields.
func (k keys) limit(name string) string { return k.prefix + "limit:" + name }

// limitLog is a LIST of one learned limit's last changes, newest first:
// "at-ms|value|reason" (LimitLogLen).
func (k keys) limitLog(name string) string { return k.prefix + "limitlog:" + name }

// limits is a SET of the pool's learned limits' names.
func (k keys) limits() string { return k.prefix + "limits" }

// knownField is the field of known for one site and class.
func knownField(site string, c Class) string { return site + "\t" + string(c) }

// Each script's KEYS, in the order its lua/ file states them: one
// builder per script (lease.lua and lease_proxy.lua share one contract,
// import.lua and remove.lua another), so a position means one key.

// leaseKeys are lease.lua's and lease_proxy.lua's KEYS.
func (k keys) leaseKeys(site string, c Class) []any {
	return []any{k.ready(site, c), k.leases(site), k.token(), k.proxies(), k.known(),
		k.quarantine(site, c), k.busy(), k.epoch(), k.cleared(site), k.rotating(), k.limit(paceName(site, c)),
		k.slotExit(site), k.exitSlots(site), k.exitHolds(site), k.exitReady(site), k.slotDraw(site)}
}

// releaseKeys are release.lua's KEYS; the busy HASH (KEYS[7]) is sent
// in exclusive mode only.
func (k keys) releaseKeys(site string, c Class, exclusive bool) []any {
	pace := paceName(site, c)
	out := []any{k.ready(site, c), k.leases(site), k.stats(site), k.quarantine(site, c), k.limit(pace), k.limitLog(pace)}
	if exclusive {
		out = append(out, k.busy())
	}
	return out
}

// extendKeys are extend.lua's KEYS.
func (k keys) extendKeys(site string, c Class) []any {
	return []any{k.ready(site, c), k.leases(site), k.busy()}
}

// syncKeys are sync.lua's KEYS.
func (k keys) syncKeys(site string, c Class) []string {
	return []string{k.ready(site, c), k.known(), k.version(), k.quarantine(site, c)}
}

// dropKeys are import.lua's and remove.lua's KEYS (lua/lib/drop.lua).
func (k keys) dropKeys() []string {
	return []string{k.proxies(), k.classes(), k.version(), k.busy(), k.known()}
}

// quarantinesKeys are quarantines.lua's KEYS.
func (k keys) quarantinesKeys() []string { return []string{k.known()} }

// unbanKeys are unban.lua's KEYS.
func (k keys) unbanKeys() []string { return []string{k.known()} }

// markClearedKeys are mark_cleared.lua's KEYS.
func (k keys) markClearedKeys(site string) []string {
	return []string{k.cleared(site), k.proxies()}
}

// coolKeys are cool.lua's KEYS.
func (k keys) coolKeys(site string, c Class) []any { return []any{k.ready(site, c)} }

// exitHoldKeys are exit_hold.lua's KEYS.
func (k keys) exitHoldKeys(site string) []any {
	return []any{k.exitHolds(site), k.exitReady(site), k.exitQuarantine(site), k.token(), k.exitSeen(site),
		k.slotExit(site), k.exitSlots(site), k.slotDraw(site)}
}

// exitRenewKeys are exit_renew.lua's KEYS.
func (k keys) exitRenewKeys(site string) []any { return []any{k.exitHolds(site), k.exitReady(site)} }

// exitReleaseKeys are exit_release.lua's KEYS.
func (k keys) exitReleaseKeys(site string) []any { return []any{k.exitHolds(site), k.exitReady(site)} }

// exitBanKeys are exit_ban.lua's KEYS.
func (k keys) exitBanKeys(site string) []any { return []any{k.exitHolds(site), k.exitQuarantine(site)} }

// rotateBeginKeys are rotate_begin.lua's KEYS for a lease of (site, c)
// on a modem of provider.
func (k keys) rotateBeginKeys(site string, c Class, provider string) []any {
	return []any{k.leases(site), k.busy(), k.rotating(), k.token(), k.modemChanges(), k.ready(site, c), k.known(),
		k.limit(ChangeLimitName(provider))}
}

// rotateExtendKeys are rotate_extend.lua's KEYS.
func (k keys) rotateExtendKeys() []any { return []any{k.rotating(), k.known()} }

// rotateChangeKeys are rotate_change.lua's KEYS for a modem of provider.
func (k keys) rotateChangeKeys(provider string) []any {
	return []any{k.rotating(), k.modemChanges(), k.known(), k.limit(ChangeLimitName(provider))}
}

// rotateRefusedKeys are rotate_refused.lua's KEYS for the learned limit
// name.
func (k keys) rotateRefusedKeys(name string) []any {
	return []any{k.modemChanges(), k.limit(name), k.limitLog(name), k.limits()}
}

// rotateChangedKeys are rotate_changed.lua's KEYS.
func (k keys) rotateChangedKeys() []any { return []any{k.modemChanges()} }

// rotateEndKeys are rotate_end.lua's KEYS for a rotation begun on
// (site, c).
func (k keys) rotateEndKeys(site string, c Class) []any {
	return []any{k.rotating(), k.modemLog(), k.modemExits(),
		k.ready(site, c), k.quarantine(site, c), k.leases(site), k.known()}
}

// modemSendKeys are modem_send.lua's KEYS for exit ip on site in the
// Unix minute.
func (k keys) modemSendKeys(site, ip string, minute int64) []any {
	name := VolumeLimitName(site)
	return []any{k.rotating(), k.modemUse(site, ip), k.modemSent(minute), k.limit(name), k.limitLog(name), k.limits()}
}

// modemVolumeKeys are modem_volume.lua's KEYS for a ban of exit ip on
// site.
func (k keys) modemVolumeKeys(site, ip string) []any {
	name := VolumeLimitName(site)
	return []any{k.modemUse(site, ip), k.limit(name), k.limitLog(name), k.limits()}
}

// limitInitKeys are limit_init.lua's KEYS.
func (k keys) limitInitKeys(name string) []any {
	return []any{k.limit(name), k.limitLog(name), k.limits()}
}

// limitSetKeys are limit_set.lua's KEYS.
func (k keys) limitSetKeys(name string) []any { return []any{k.limit(name), k.limitLog(name)} }
