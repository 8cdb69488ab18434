package avito

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"crawlq/tasks/site"
)

// QRATOR's proof of work in front of Avito (439, "Доступ ограничен:
// проверка безопасности"; captured 2026-08-27, docs/sites.md): the
// exchange's endpoints and the cookie the 439 sets.
const (
	PoWGetPath    = "/web/3/firewallPow/get"
	PoWVerifyPath = "/web/3/firewallPow/verify"
	PoWCookie     = "pow_challenge"
	// MaxPoWCompl is the hardest work solved: 6 hex zeros, some 17
	// million hashes (a few seconds); harder work fails the solve.
	MaxPoWCompl = 6
)

// ErrPoW: the proof of work was not solved; the error says at which step.
var ErrPoW = errors.New("avito proof of work not solved")

// solvePoW solves the proof of work the session's last answer was (a
// site.Solve): it posts the pow_challenge cookie for the work, finds the
// nonce and posts it, as the page's script does; the site's answer to a
// right nonce sets the clearance cookie in the session.
func solvePoW(ctx context.Context, s *site.Site, sess site.Session) error {
	base := s.Endpoint(site.EndpointWeb)
	challenge := sess.Cookie(base+"/", PoWCookie)
	if challenge == "" {
		return fmt.Errorf("%w: the challenge set no %s cookie", ErrPoW, PoWCookie)
	}
	if v, err := url.PathUnescape(challenge); err == nil { // the page decodes it
		challenge = v
	}
	var got struct {
		Success struct {
			Result struct {
				JWT string `json:"challenge_jwt"`
			} `json:"result"`
		} `json:"success"`
	}
	if err := postPoW(ctx, sess, base+PoWGetPath, map[string]any{"challenge": challenge}, &got); err != nil {
		return err
	}
	w, err := parseWork(got.Success.Result.JWT)
	if err != nil {
		return err
	}
	nonce, err := findNonce(ctx, w.ID, w.Compl)
	if err != nil {
		return err
	}
	return verifyPoW(ctx, sess, base, got.Success.Result.JWT, nonce)
}

// verifyPoW posts the nonce with its work's JWT and sets, verified, the
// short cookie the page's script sets before it reloads.
func verifyPoW(ctx context.Context, sess site.Session, base, jwt string, nonce uint64) error {
	var got struct {
		Success struct {
			Result struct {
				Verified bool `json:"verified"`
			} `json:"result"`
		} `json:"success"`
	}
	if err := postPoW(ctx, sess, base+PoWVerifyPath, map[string]any{"challenge": jwt, "nonce": nonce}, &got); err != nil {
		return err
	}
	if !got.Success.Result.Verified {
		return fmt.Errorf("%w: %s did not verify nonce %d", ErrPoW, PoWVerifyPath, nonce)
	}
	sess.SetCookie(base+"/", &http.Cookie{Name: "pow_solved", Value: "1", Path: "/", MaxAge: 10, SameSite: http.SameSiteLaxMode})
	return nil
}

// postPoW posts in as JSON to rawURL and reads a 200 JSON answer into out.
func postPoW(ctx context.Context, sess site.Session, rawURL string, in, out any) error {
	body, _ := json.Marshal(in)
	status, answer, err := sess.PostJSON(ctx, rawURL, body)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrPoW, rawURL, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%w: %s answered %d", ErrPoW, rawURL, status)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%w: %s answered no JSON: %w", ErrPoW, rawURL, err)
	}
	return nil
}

// work is what a work's JWT names: its id and difficulty (hex zeros).
type work struct {
	ID    string `json:"id"`
	Compl int    `json:"compl"`
}

// parseWork reads the payload of a work's JWT (its signature is the
// site's to check).
func parseWork(jwt string) (work, error) {
	var w work
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return w, fmt.Errorf("%w: the work is not a JWT (%d parts)", ErrPoW, len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err == nil {
		err = json.Unmarshal(raw, &w)
	}
	switch {
	case err != nil:
		return w, fmt.Errorf("%w: the work's payload: %w", ErrPoW, err)
	case w.ID == "" || w.Compl < 0:
		return w, fmt.Errorf("%w: the work's payload has no id or a negative compl (%d)", ErrPoW, w.Compl)
	case w.Compl > MaxPoWCompl:
		return w, fmt.Errorf("%w: the work asks %d hex zeros, more than the %d solved", ErrPoW, w.Compl, MaxPoWCompl)
	}
	return w, nil
}

// findNonce is the first nonce (0, 1, …) whose hex sha256 of "id:nonce"
// starts with compl zeros, as the page's script counts. It stops with
// ctx.
func findNonce(ctx context.Context, id string, compl int) (uint64, error) {
	buf := append([]byte(id), ':')
	prefix := len(buf)
	for n := uint64(0); ; n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			return 0, fmt.Errorf("%w: %w", ErrPoW, ctx.Err())
		}
		buf = strconv.AppendUint(buf[:prefix], n, 10)
		if hexZeros(sha256.Sum256(buf), compl) {
			return n, nil
		}
	}
}

// hexZeros says whether sum's hex form starts with n zeros.
func hexZeros(sum [sha256.Size]byte, n int) bool {
	for i := 0; i < n/2; i++ {
		if sum[i] != 0 {
			return false
		}
	}
	return n%2 == 0 || sum[n/2]>>4 == 0
}
