package testbed

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
)

// WhoamiPath answers the client IP on every site.
const WhoamiPath = "/__testbed/whoami"

// clientIP is the remote address of r without its port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// serveWhoami writes the client IP as plain text, or {"ip":…} with ?json=1.
func serveWhoami(w http.ResponseWriter, r *http.Request) {
	ip := clientIP(r)
	if r.URL.Query().Get("json") == "1" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"ip": ip})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, ip+"\n")
}

// WhoamiHandler serves WhoamiPath alone; handy for tests of the farm.
func WhoamiHandler() http.Handler { return http.HandlerFunc(serveWhoami) }
