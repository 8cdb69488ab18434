package schedule

import (
	"embed"

	"crawlq/internal/luascript"
)

// The store's Lua scripts. Each is a file of lua/, which opens with its
// KEYS and ARGV contract.

//go:embed lua/*.lua
var luaFiles embed.FS

var (
	// setPausedScript: SetPaused (lua/set_paused.lua).
	setPausedScript = luascript.New(luaFiles, "set_paused")
	// decideScript: a tick's decision (lua/decide.lua).
	decideScript = luascript.New(luaFiles, "decide")
)
