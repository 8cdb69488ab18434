package fetcher

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
)

func TestTransportCacheEvictsLeastRecentlyUsed(t *testing.T) {
	built := 0
	c := newTransportCache(2, func(*url.URL, string) roundTripper { built++; return &http.Transport{} })
	a, _ := url.Parse("http://u:p1@127.0.0.2:8080")
	b, _ := url.Parse("http://u:p2@127.0.0.2:8080") // same host, other credentials
	d, _ := url.Parse("socks5://127.0.0.3:1080")
	ta, _ := c.get(a, "")
	c.get(b, "")
	if again, _ := c.get(a, ""); again != ta {
		t.Fatal("second get of one proxy built a new transport")
	}
	c.get(d, "") // evicts b, the least recently used
	if c.len() != 2 || built != 3 {
		t.Fatalf("len %d built %d, want 2 and 3", c.len(), built)
	}
	if again, _ := c.get(a, ""); again != ta {
		t.Error("a was evicted instead of b")
	}
	c.close()
	if _, err := c.get(a, ""); !errors.Is(err, ErrClosed) {
		t.Errorf("get after close: %v, want ErrClosed", err)
	}
}

// TestTransportCacheForget: forgetting a proxy drops its transports of
// every fingerprint and no other proxy's, even one that differs only by
// its username (another gateway session).
func TestTransportCacheForget(t *testing.T) {
	c := newTransportCache(10, func(*url.URL, string) roundTripper { return &http.Transport{} })
	s1, _ := url.Parse("http://cust-session-aa:pw@127.0.0.9:22225")
	s2, _ := url.Parse("http://cust-session-aab:pw@127.0.0.9:22225")
	c.get(s1, "chrome")
	c.get(s1, "firefox")
	kept, _ := c.get(s2, "chrome")
	c.forget(s1)
	if c.len() != 1 {
		t.Fatalf("%d transports after forgetting one proxy's two, want 1", c.len())
	}
	if again, _ := c.get(s2, "chrome"); again != kept {
		t.Error("forgetting s1 dropped s2's transport")
	}
}
