package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"crawlq/testbed"
)

// testMix is small: one short search with follow and one direct product
// per site.
var testMix = Mix{Searches: 1, Pages: 1, MinMatches: 3, MaxMatches: 6, Products: 1}

// TestRunCrawlsEverySite runs the real demo on the embedded Redis with a
// small mix: every site completes jobs, items come out, the sites see no
// I1/I2 violation, and nothing is left running.
func TestRunCrawlsEverySite(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	sum, err := Run(context.Background(), Config{Duration: 25 * time.Second, Mix: testMix, Proxies: 12, Progress: &out})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, name := range testbed.SiteNames {
		if st := sum.Sites[name]; st.Completed == 0 || st.Items == 0 {
			t.Errorf("%s: %d completed, %d items; want both > 0 (%+v)", name, st.Completed, st.Items, st)
		}
	}
	if sum.Items == 0 || sum.Pages == 0 {
		t.Errorf("items %d, pages %d; want > 0", sum.Items, sum.Pages)
	}
	if sum.I1Violations != 0 || sum.I2Violations != 0 {
		t.Errorf("violations I1 %d, I2 %d; want 0", sum.I1Violations, sum.I2Violations)
	}
	t.Logf("summary: %+v\nprogress:\n%s", sum, out.String())
}
