package avito_test

import (
	"testing"

	"crawlq/internal/sitetest"
	"crawlq/tasks/avito"
)

// FuzzParse: see sitetest.FuzzParse; the seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) { sitetest.FuzzParse(f, avito.Name) }
