package detect

import (
	_ "embed"
	"sync"
)

//go:embed builtin.yaml
var builtinYAML []byte

// builtin is builtin.yaml parsed once.
var builtin = sync.OnceValue(func() Rules {
	rs, err := ParseRules("builtin.yaml", builtinYAML)
	if err != nil {
		panic("detect: " + err.Error())
	}
	return rs
})

// Builtin returns the built-in rules for wildberries, ozon and avito and
// the default rule for every other site (see builtin.yaml). The result is
// a fresh copy the caller may change.
func Builtin() Rules {
	return Rules{}.Merge(builtin())
}
