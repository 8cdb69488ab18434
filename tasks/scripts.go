package tasks

import (
	"embed"

	"crawlq/internal/luascript"
)

// The worker's Lua scripts. Each is a file of lua/, which opens with its
// KEYS and ARGV contract.

//go:embed lua/*.lua
var luaFiles embed.FS

// wakeScript: Waker's wake (lua/wake.lua).
var wakeScript = luascript.New(luaFiles, "wake")
