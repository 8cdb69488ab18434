package samples

import (
	"path/filepath"
	"runtime"
)

// Dir returns the absolute path of the samples folder (one subfolder per
// site). It is found from this source file's own location, so it works from
// any package's test, in any clone.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("samples: runtime.Caller failed")
	}
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Path returns the path of one sample: Path("ozon", "x.html").
func Path(site, file string) string {
	return filepath.Join(Dir(), site, file)
}
