package wildberries_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWBAASTokenLivesSevenDays reads the real x_wbaas_token of
// 2026-01-26 (Rix70/Wb_price_checker; testdata/2026/README.md): its
// payload names the IP and User-Agent it is bound to, and expires 7 days
// after it was issued, not the 72 h docs/sites.md said before issue 36.10.
func TestWBAASTokenLivesSevenDays(t *testing.T) {
	f := strings.Split(strings.TrimSpace(string(sample2026(t, "rix70_x_wbaas_token_payload_redacted.txt"))), "|")
	if len(f) != 11 || f[1] != "<ip>" || f[2] != "<user-agent>" || f[4] != "reusable" {
		t.Fatalf("payload fields %q: want 11, the 2nd and 3rd the bound IP and User-Agent", f)
	}
	exp, err1 := strconv.ParseInt(f[3], 10, 64)
	iat, err2 := strconv.ParseInt(f[9], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("expiry %q, issued %q: %v %v", f[3], f[9], err1, err2)
	}
	if got := time.Duration(exp-iat) * time.Second; got != 7*24*time.Hour {
		t.Errorf("token lifetime %s, want 168h (7 days)", got)
	}
	if issued := time.Unix(iat, 0).UTC(); issued.Year() != 2026 {
		t.Errorf("issued %s, want 2026", issued)
	}
}
