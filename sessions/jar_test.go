package sessions

import (
	"net/http"
	"net/url"
	"testing"
)

// TestJarForget: forget deletes every cookie of the name, on every host
// and path, from the jar and from what is stored; others stay.
func TestJarForget(t *testing.T) {
	j := newJar(nil)
	a, _ := url.Parse("https://a.example/x/y")
	b, _ := url.Parse("https://b.example/")
	j.SetCookies(a, []*http.Cookie{{Name: "tok", Value: "1", Path: "/"}, {Name: "tok", Value: "2", Path: "/x"}, {Name: "keep", Value: "k", Path: "/"}})
	j.SetCookies(b, []*http.Cookie{{Name: "tok", Value: "3", Path: "/"}})
	j.forget("tok")
	for _, u := range []*url.URL{a, b} {
		for _, c := range j.Cookies(u) {
			if c.Name == "tok" {
				t.Errorf("%s still sends tok=%s", u, c.Value)
			}
		}
	}
	if got := j.Cookies(a); len(got) != 1 || got[0].Name != "keep" {
		t.Errorf("cookies for %s: %v; want keep only", a, got)
	}
	if s := j.snapshot(); len(s) != 1 || s[0].Name != "keep" {
		t.Errorf("stored cookies %+v; want keep only", s)
	}
}
