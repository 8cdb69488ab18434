package avito

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"crawlq/testbed"
)

// TestFindNonceMeetsTheDifficulty: the nonce found is the first whose hex
// sha256 of "id:nonce" starts with compl zeros, as the testbed (and the
// captured page's script) checks it, for even and odd difficulties.
func TestFindNonceMeetsTheDifficulty(t *testing.T) {
	for _, compl := range []int{0, 1, 2, 3, 4} {
		n, err := findNonce(context.Background(), "5f2c9e0a", compl)
		if err != nil || !testbed.PoWSolves("5f2c9e0a", n, compl) {
			t.Fatalf("compl %d: nonce %d, %v; want one the site verifies", compl, n, err)
		}
		for m := uint64(0); m < n; m++ {
			if testbed.PoWSolves("5f2c9e0a", m, compl) {
				t.Fatalf("compl %d: nonce %d found, but %d already solves", compl, n, m)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := findNonce(ctx, "x", MaxPoWCompl); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestParseWorkRefusesWhatItCannotSolve: a work's JWT gives its id and
// difficulty; one that is not a JWT, has no id, or asks more than
// MaxPoWCompl hex zeros is refused with the reason.
func TestParseWorkRefusesWhatItCannotSolve(t *testing.T) {
	jwt := func(payload string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	}
	if w, err := parseWork(jwt(`{"id":"ab12","compl":4,"exp":1787849162}`)); err != nil || w != (work{ID: "ab12", Compl: 4}) {
		t.Errorf("a work: %+v, %v", w, err)
	}
	for _, tt := range []struct{ jwt, want string }{
		{"not-a-jwt", "not a JWT"},
		{jwt(`{"compl":4}`), "no id"},
		{jwt(`{"id":"ab","compl":9}`), "9 hex zeros"},
		{"a.%%%.c", "payload"},
	} {
		if _, err := parseWork(tt.jwt); !errors.Is(err, ErrPoW) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want ErrPoW naming %q", tt.jwt, err, tt.want)
		}
	}
}
