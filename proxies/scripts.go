package proxies

import (
	"context"
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
	// quarantinesScript: the fallback's read of the quarantines
	// (lua/quarantines.lua).
	quarantinesScript = newScript("quarantines")
	// unbanScript: Unban and UnbanAll (lua/unban.lua).
	unbanScript = newScript("unban")
	// markClearedScript: MarkCleared (lua/mark_cleared.lua).
	markClearedScript = newScript("mark_cleared")
	// exitHoldScript: HoldExit (lua/exit_hold.lua).
	exitHoldScript = newScript("exit_hold")
	// exitRenewScript: ExtendExit (lua/exit_renew.lua).
	exitRenewScript = newScript("exit_renew")
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
	// rotateRefusedScript: Refused (lua/rotate_refused.lua).
	rotateRefusedScript = newScript("rotate_refused")
	// rotateEndScript: EndRotation (lua/rotate_end.lua).
	rotateEndScript = newScript("rotate_end")
	// modemSendScript: ModemSend (lua/modem_send.lua).
	modemSendScript = newScript("modem_send")
	// modemVolumeScript: ModemBanned (lua/modem_volume.lua).
	modemVolumeScript = newScript("modem_volume")
	// coolScript: the fallback return's cool (lua/cool.lua).
	coolScript = newScript("cool")
	// limitInitScript: EnsureLimit (lua/limit_init.lua).
	limitInitScript = newScript("limit_init")
	// limitSetScript: SetLimit, PinLimit, UnpinLimit (lua/limit_set.lua).
	limitSetScript = newScript("limit_set")
)

// newScript is lua/<name>.lua preceded by the lib files it names.
func newScript(name string) *redis.Script { return luascript.New(luaFiles, name) }

// shas are the pre-boxed SHA1s of the scripts eval runs.
var shas = map[*redis.Script]any{
	leaseScript: leaseScript.Hash(), leaseProxyScript: leaseProxyScript.Hash(),
	releaseScript: releaseScript.Hash(), extendScript: extendScript.Hash(),
	exitHoldScript: exitHoldScript.Hash(), exitRenewScript: exitRenewScript.Hash(), exitReleaseScript: exitReleaseScript.Hash(),
	exitBanScript: exitBanScript.Hash(), rotateBeginScript: rotateBeginScript.Hash(),
	rotateExtendScript: rotateExtendScript.Hash(), rotateChangeScript: rotateChangeScript.Hash(),
	rotateChangedScript: rotateChangedScript.Hash(), rotateRefusedScript: rotateRefusedScript.Hash(),
	rotateEndScript: rotateEndScript.Hash(), modemSendScript: modemSendScript.Hash(), modemVolumeScript: modemVolumeScript.Hash(),
	coolScript: coolScript.Hash(), limitInitScript: limitInitScript.Hash(), limitSetScript: limitSetScript.Hash(),
}

// eval runs s by EVALSHA with keys and args already boxed, so a call costs
// one slice, and loads s once if Redis does not know it (after a restart
// or SCRIPT FLUSH).
func (b *RedisBroker) eval(ctx context.Context, s *redis.Script, keys, args []any) ([]any, error) {
	res, _, err := b.evalAcked(ctx, s, keys, args)
	return res, err
}

// evalAcked is eval that also says whether Config.Replicas acknowledged
// the script's writes (always true without Replicas).
func (b *RedisBroker) evalAcked(ctx context.Context, s *redis.Script, keys, args []any) ([]any, bool, error) {
	for try := 0; ; try++ {
		cmd := evalshaCmd(ctx, s, keys, args)
		acked := b.process(ctx, cmd)
		res, err := cmd.Result()
		if try > 0 || !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return res, acked, err
		}
		if err := s.Load(ctx, b.rdb).Err(); err != nil {
			return nil, false, err
		}
	}
}

// evalshaCmd is the EVALSHA command of s with keys and args.
func evalshaCmd(ctx context.Context, s *redis.Script, keys, args []any) *redis.SliceCmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "evalsha", shas[s], len(keys))
	cmdArgs = append(append(cmdArgs, keys...), args...)
	cmd := redis.NewSliceCmd(ctx, cmdArgs...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// process sends cmd through the batcher, or alone without one, and says
// whether the replicas acknowledged it (always true without Replicas).
func (b *RedisBroker) process(ctx context.Context, cmd redis.Cmder) (acked bool) {
	if b.batch != nil {
		acked, _ = b.batch.processAcked(ctx, cmd)
		return acked
	}
	_ = b.rdb.Process(ctx, cmd)
	return true
}
