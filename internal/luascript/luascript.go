package luascript

import (
	"io/fs"
	"strings"

	"github.com/redis/go-redis/v9"
)

// New is the script lua/<name>.lua of fsys, preceded by the lib files its
// "-- lib:" line names (Source).
func New(fsys fs.FS, name string) *redis.Script {
	return redis.NewScript(Source(fsys, name))
}

// Source is the source of lua/<name>.lua of fsys, preceded by the lib
// files its "-- lib:" line names, for a caller that sends it with EVAL
// (in a transaction, where EVALSHA's fallback cannot run). It panics on a
// missing file: the files are embedded, so a bad name fails every test.
func Source(fsys fs.FS, name string) string {
	body := read(fsys, "lua/"+name+".lua")
	var src strings.Builder
	for _, lib := range libsOf(body) {
		src.WriteString(read(fsys, "lua/lib/"+lib+".lua"))
	}
	src.WriteString(body)
	return src.String()
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

func read(fsys fs.FS, path string) string {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		panic("luascript: " + err.Error())
	}
	return string(b)
}
