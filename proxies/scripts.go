package proxies

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every state change of the broker is one of these scripts: one round trip,
// atomic, on Redis's own clock (TIME) plus the broker's injected skew, so
// servers with skewed clocks agree. Times are milliseconds.
//
// Each script is a file of lua/, which opens with its KEYS and ARGV
// contract. The functions scripts share are in lua/lib/, one file per
// group; a script names the ones it uses on a line "-- lib: a b c", and
// newScript prepends lua/lib/a.lua, b.lua, c.lua in that order. A
// fragment only defines local functions, which take what they need as
// arguments (no globals besides KEYS and ARGV, read by lease_request).

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
)

// newScript is lua/<name>.lua preceded by the lib files its "-- lib:"
// line names. It panics on a missing file: the files are embedded, so a
// bad name fails every test.
func newScript(name string) *redis.Script {
	body := luaFile("lua/" + name + ".lua")
	var src strings.Builder
	for _, lib := range libsOf(body) {
		src.WriteString(luaFile("lua/lib/" + lib + ".lua"))
	}
	src.WriteString(body)
	return redis.NewScript(src.String())
}

// libsOf are the names on the "-- lib:" line of a script, if any.
func libsOf(body string) []string {
	for _, line := range strings.Split(body, "\n") {
		if libs, ok := strings.CutPrefix(line, "-- lib:"); ok {
			return strings.Fields(libs)
		}
	}
	return nil
}

func luaFile(path string) string {
	b, err := luaFiles.ReadFile(path)
	if err != nil {
		panic("proxies: " + err.Error())
	}
	return string(b)
}
