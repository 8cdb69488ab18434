package proxies

import (
	"embed"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/luascript"
)

// Every state change of the broker is one of these scripts: one round trip,
// atomic, on Redis's own clock (TIME) plus the broker's injected skew, so
// servers with skewed clocks agree. Times are milliseconds.
//
// Each script is a file of lua/, which opens with its KEYS and ARGV
// contract. The functions scripts share are in lua/lib/, one file per
// group; a script names the ones it uses on a line "-- lib: a b c"
// (internal/luascript). A fragment only defines local functions, which
// take what they need as arguments (no globals besides KEYS and ARGV,
// read by lease_request).

//go:embed lua/*.lua lua/lib/*.lua
var luaFiles embed.FS

var (
	// leaseScript: Lease (lua/lease.lua).
	leaseScript = newScript("lease")
	// leaseProxyScript: LeaseProxy (lua/lease_proxy.lua).
	leaseProxyScript = newScript("lease_proxy")
	// releaseScript: Release (lua/release.lua).
	releaseScript = newScript("release")
	// extendScript: Extend (lua/extend.lua).
	extendScript = newScript("extend")
	// importScript: Import (lua/import.lua).
	importScript = newScript("import")
	// removeScript: Remove (lua/remove.lua).
	removeScript = newScript("remove")
	// syncScript: a ready set's resync (lua/sync.lua).
	syncScript = newScript("sync")
	// unbanScript: Unban and UnbanAll (lua/unban.lua).
	unbanScript = newScript("unban")
	// markClearedScript: MarkCleared (lua/mark_cleared.lua).
	markClearedScript = newScript("mark_cleared")
	// exitHoldScript: HoldExit and ExtendExit (lua/exit_hold.lua).
	exitHoldScript = newScript("exit_hold")
	// exitReleaseScript: ReleaseExit (lua/exit_release.lua).
	exitReleaseScript = newScript("exit_release")
	// exitBanScript: BanExit (lua/exit_ban.lua).
	exitBanScript = newScript("exit_ban")
	// rotateBeginScript: BeginRotation (lua/rotate_begin.lua).
	rotateBeginScript = newScript("rotate_begin")
	// rotateExtendScript: ExtendRotation (lua/rotate_extend.lua).
	rotateExtendScript = newScript("rotate_extend")
	// rotateChangeScript: MayChange (lua/rotate_change.lua).
	rotateChangeScript = newScript("rotate_change")
	// rotateChangedScript: Changed (lua/rotate_changed.lua).
	rotateChangedScript = newScript("rotate_changed")
	// rotateEndScript: EndRotation (lua/rotate_end.lua).
	rotateEndScript = newScript("rotate_end")
	// modemSendScript: ModemSend (lua/modem_send.lua).
	modemSendScript = newScript("modem_send")
	// coolScript: the fallback return's cool (lua/cool.lua).
	coolScript = newScript("cool")
)

// newScript is lua/<name>.lua preceded by the lib files it names.
func newScript(name string) *redis.Script { return luascript.New(luaFiles, name) }
