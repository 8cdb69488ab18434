package avito_test

import (
	"testing"

	"crawlq/tasks/avito"
	"crawlq/testbed/sitetest"
)

// FuzzParse: see sitetest.FuzzParse; the seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) { sitetest.FuzzParse(f, avito.Name) }
