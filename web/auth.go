package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
)

// ErrBadAuth is returned for a Config.Auth that is not USER:PASS.
var ErrBadAuth = errors.New("auth must be USER:PASS with a non-empty user and password")

// basicAuth holds the SHA-256 of the expected user and password, so the
// comparison is constant-time whatever the lengths.
type basicAuth struct {
	user, pass [sha256.Size]byte
}

// parseAuth reads "user:pass"; the password may contain colons.
func parseAuth(s string) (*basicAuth, error) {
	user, pass, ok := strings.Cut(s, ":")
	if !ok || user == "" || pass == "" {
		return nil, ErrBadAuth
	}
	return &basicAuth{user: sha256.Sum256([]byte(user)), pass: sha256.Sum256([]byte(pass))}, nil
}

// allows checks the request's credentials in constant time.
func (a *basicAuth) allows(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u := sha256.Sum256([]byte(user))
	p := sha256.Sum256([]byte(pass))
	return subtle.ConstantTimeCompare(u[:], a.user[:])&subtle.ConstantTimeCompare(p[:], a.pass[:]) == 1
}

// wrap answers 401 with a WWW-Authenticate challenge unless the request
// carries the right credentials.
func (a *basicAuth) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allows(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="crawlq", charset="UTF-8"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
