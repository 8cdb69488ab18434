package fetcher_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// TestExitProbeLearnsTheGatewaysExit: through a gateway session, the
// probe names the exit the gateway gave it, from the echo's body or from
// the provider's header (on the CONNECT reply of an https echo), and
// never shows the password in an error.
func TestExitProbeLearnsTheGatewaysExit(t *testing.T) {
	plain := httptest.NewServer(testbed.WhoamiHandler())
	defer plain.Close()
	secure := httptest.NewTLSServer(testbed.WhoamiHandler())
	defer secure.Close()
	for _, header := range []string{"", "x-luminati-ip"} {
		g, err := testbed.StartGateway(context.Background(), testbed.GatewayConfig{Exits: 20, User: "cust", Password: "s3cret", ExitHeader: header})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		proxy, _ := url.Parse(g.URL("cust-session-p1"))
		for _, srv := range []*httptest.Server{plain, secure} {
			probe := fetcher.ExitProbe{URL: srv.URL + testbed.WhoamiPath, Header: header,
				TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig}
			ip, err := probe.Learn(context.Background(), proxy)
			want, _ := g.ExitOf("p1")
			if err != nil || ip != want {
				t.Errorf("header %q, %s: probe = %q, %v; the gateway's exit is %q", header, srv.URL, ip, err, want)
			}
		}
		bad, _ := url.Parse(g.URL("cust-session-p1"))
		bad.User = url.UserPassword("cust-session-p1", "wrong-s3cret")
		_, err = fetcher.ExitProbe{URL: plain.URL + testbed.WhoamiPath}.Learn(context.Background(), bad)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("refused probe: %v, want an error without the password", err)
		}
	}
	notIP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>hi</html>")) }))
	defer notIP.Close()
	g, err := testbed.StartGateway(context.Background(), testbed.GatewayConfig{Exits: 2, User: "cust", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	proxy, _ := url.Parse(g.URL("cust-session-p2"))
	if _, err := (fetcher.ExitProbe{URL: notIP.URL}).Learn(context.Background(), proxy); !errors.Is(err, fetcher.ErrExitUnknown) {
		t.Errorf("an answer without an IP: %v, want ErrExitUnknown", err)
	}
}
