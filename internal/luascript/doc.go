// Package luascript builds the Redis scripts of crawlq's packages from
// their embedded .lua files: each script is lua/<name>.lua, which opens
// with its KEYS and ARGV contract, and the functions scripts share are in
// lua/lib/, one file per group. A script names the ones it uses on a line
// "-- lib: a b c"; its source is lua/lib/a.lua, b.lua, c.lua in that
// order, then the script. A lib file only defines local functions, which
// take what they need as arguments.
package luascript
