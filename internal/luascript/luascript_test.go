package luascript

import (
	"testing"
	"testing/fstest"
)

func TestSource(t *testing.T) {
	fsys := fstest.MapFS{
		"lua/plain.lua":   {Data: []byte("return 1\n")},
		"lua/uses.lua":    {Data: []byte("-- uses: two libs\n--\n-- lib: b a\n\nreturn a() + b()\n")},
		"lua/lib/a.lua":   {Data: []byte("local function a() return 1 end\n")},
		"lua/lib/b.lua":   {Data: []byte("local function b() return 2 end\n")},
		"lua/missing.lua": {Data: []byte("-- lib: nope\nreturn 0\n")},
	}
	tests := []struct {
		name, script, want string
	}{
		{name: "no libs", script: "plain", want: "return 1\n"},
		{name: "libs in the order named", script: "uses",
			want: "local function b() return 2 end\nlocal function a() return 1 end\n" +
				"-- uses: two libs\n--\n-- lib: b a\n\nreturn a() + b()\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Source(fsys, tc.script); got != tc.want {
				t.Errorf("Source(%s) = %q, want %q", tc.script, got, tc.want)
			}
		})
	}
	for _, name := range []string{"absent", "missing"} {
		t.Run("panics on "+name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Source(%s) did not panic", name)
				}
			}()
			Source(fsys, name)
		})
	}
}
