package sessions

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"time"
)

// jar is a cookie jar that remembers what was set, so the session's cookies
// can be stored in Redis and replayed on another server.
type jar struct {
	mu    sync.Mutex
	inner *cookiejar.Jar
	set   map[string]storedCookie // key: host|path|name
}

// storedCookie is one cookie as it was set, with the URL that set it.
type storedCookie struct {
	URL      string    `json:"url"`
	Name     string    `json:"name"`
	Value    string    `json:"value"`
	Path     string    `json:"path,omitempty"`
	Domain   string    `json:"domain,omitempty"`
	Expires  time.Time `json:"expires,omitempty"`
	Secure   bool      `json:"secure,omitempty"`
	HTTPOnly bool      `json:"http_only,omitempty"`
}

func newJar(stored []storedCookie) *jar {
	inner, _ := cookiejar.New(nil) // only fails on a bad PublicSuffixList
	j := &jar{inner: inner, set: map[string]storedCookie{}}
	for _, c := range stored {
		j.setStored(c)
	}
	return j
}

// setStored sets a stored cookie again.
func (j *jar) setStored(c storedCookie) {
	if u, err := url.Parse(c.URL); err == nil {
		j.SetCookies(u, []*http.Cookie{c.cookie()})
	}
}

// SetCookies implements http.CookieJar and remembers the cookies.
func (j *jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.inner.SetCookies(u, cookies)
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cookies {
		key := u.Hostname() + "|" + c.Path + "|" + c.Name
		if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(time.Now())) {
			delete(j.set, key)
			continue
		}
		j.set[key] = storeCookie(u, c)
	}
}

// forget deletes every cookie named name, whatever its host and path.
func (j *jar) forget(name string) {
	j.mu.Lock()
	var gone []storedCookie
	for key, c := range j.set {
		if c.Name == name {
			gone = append(gone, c)
			delete(j.set, key)
		}
	}
	j.mu.Unlock()
	for _, c := range gone {
		if u, err := url.Parse(c.URL); err == nil {
			j.inner.SetCookies(u, []*http.Cookie{{Name: c.Name, Path: c.Path, Domain: c.Domain, MaxAge: -1}})
		}
	}
}

// Cookies implements http.CookieJar.
func (j *jar) Cookies(u *url.URL) []*http.Cookie { return j.inner.Cookies(u) }

// snapshot lists the remembered cookies for storage.
func (j *jar) snapshot() []storedCookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]storedCookie, 0, len(j.set))
	for _, c := range j.set {
		out = append(out, c)
	}
	return out
}

func storeCookie(u *url.URL, c *http.Cookie) storedCookie {
	expires := c.Expires
	if c.MaxAge > 0 {
		expires = time.Now().Add(time.Duration(c.MaxAge) * time.Second)
	}
	return storedCookie{
		URL:  (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String(),
		Name: c.Name, Value: c.Value, Path: c.Path, Domain: c.Domain,
		Expires: expires, Secure: c.Secure, HTTPOnly: c.HttpOnly,
	}
}

func (c storedCookie) cookie() *http.Cookie {
	return &http.Cookie{Name: c.Name, Value: c.Value, Path: c.Path, Domain: c.Domain,
		Expires: c.Expires, Secure: c.Secure, HttpOnly: c.HTTPOnly}
}
