package results

import (
	"embed"

	"crawlq/internal/luascript"
)

// The stream's Lua scripts. Each is a file of lua/, which opens with its
// KEYS and ARGV contract; lua/lib/group.lua reads a consumer group's
// fields for those that name it on their "-- lib:" line
// (internal/luascript).

//go:embed lua/*.lua lua/lib/*.lua
var luaFiles embed.FS

var (
	// appendScript: a page's items (lua/append.lua), sent with EVAL in
	// WritePageOf's transaction.
	appendScript = luascript.Source(luaFiles, "append")
	// trimScript: TrimAcked (lua/trim.lua).
	trimScript = luascript.New(luaFiles, "trim")
	// backlogScript: ReadBacklog (lua/backlog.lua).
	backlogScript = luascript.New(luaFiles, "backlog")
	// ackScript: Ack (lua/ack.lua).
	ackScript = luascript.New(luaFiles, "ack")
	// removeIdleScript: RemoveIdleConsumers (lua/remove_idle.lua).
	removeIdleScript = luascript.New(luaFiles, "remove_idle")
)
