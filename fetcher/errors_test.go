package fetcher_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"crawlq/fetcher"
	"crawlq/internal/mask"
	"crawlq/testbed"
)

// Farm layout of TestDoClassifiesErrors: even indexes are http proxies,
// odd ones socks5; all need auth.
const (
	okHTTP, okSOCKS     = 0, 1
	deadHTTP, deadSOCKS = 2, 3
	slowHTTP, slowSOCKS = 4, 5
)

func TestDoClassifiesErrors(t *testing.T) {
	plain, secure := startTarget(t, false), startTarget(t, true)
	farm := startFarm(t, testbed.FarmConfig{N: 6, Auth: true, SOCKS5Every: 2, Faults: map[int]testbed.Fault{
		deadHTTP: {Dead: true}, deadSOCKS: {Dead: true},
		slowHTTP: {Slow: time.Minute}, slowSOCKS: {Slow: time.Minute},
	}})
	core, logs := observer.New(zap.DebugLevel)
	quick := fetcher.Config{
		Logger:                zap.New(core),
		TLS:                   secure.tlsConfig(),
		ProxyHandshakeTimeout: 300 * time.Millisecond,
		ResponseHeaderTimeout: 300 * time.Millisecond,
		Timeout:               20 * time.Second,
	}
	overall := quick
	overall.ProxyHandshakeTimeout, overall.Timeout = time.Minute, 300*time.Millisecond
	untrusting := quick
	untrusting.TLS = nil
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	px := func(i int) *url.URL { return proxyURL(t, farm, i) }
	const wrong = "wrong-s3cret"
	tests := []struct {
		name  string
		cfg   fetcher.Config
		ctx   context.Context
		proxy *url.URL
		url   string
		want  fetcher.ErrorKind
	}{
		{name: "dead http proxy", proxy: px(deadHTTP), url: plain.url("/ip"), want: fetcher.ProxyRefused},
		{name: "dead http proxy, CONNECT", proxy: px(deadHTTP), url: secure.url("/ip"), want: fetcher.ProxyRefused},
		{name: "dead socks5 proxy", proxy: px(deadSOCKS), url: plain.url("/ip"), want: fetcher.ProxyRefused},
		{name: "wrong password, http proxy answers 407", proxy: withPassword(px(okHTTP), wrong), url: plain.url("/ip"), want: fetcher.ProxyAuth},
		{name: "wrong password, CONNECT answers 407", proxy: withPassword(px(okHTTP), wrong), url: secure.url("/ip"), want: fetcher.ProxyAuth},
		{name: "wrong password, socks5", proxy: withPassword(px(okSOCKS), wrong), url: plain.url("/ip"), want: fetcher.ProxyAuth},
		{name: "no credentials, socks5", proxy: &url.URL{Scheme: "socks5", Host: px(okSOCKS).Host}, url: plain.url("/ip"), want: fetcher.ProxyAuth},
		{name: "slow proxy past the handshake timeout, CONNECT", proxy: px(slowHTTP), url: secure.url("/ip"), want: fetcher.ProxyTimeout},
		{name: "slow proxy past the handshake timeout, socks5", proxy: px(slowSOCKS), url: plain.url("/ip"), want: fetcher.ProxyTimeout},
		{name: "slow proxy past the overall timeout, CONNECT", cfg: overall, proxy: px(slowHTTP), url: secure.url("/ip"), want: fetcher.ProxyTimeout},
		{name: "slow forwarding proxy looks like a slow target", proxy: px(slowHTTP), url: plain.url("/ip"), want: fetcher.TargetTimeout},
		{name: "slow target through a proxy", proxy: px(okHTTP), url: secure.url("/slow"), want: fetcher.TargetTimeout},
		{name: "slow target direct", url: plain.url("/slow"), want: fetcher.TargetTimeout},
		{name: "untrusted certificate through CONNECT", cfg: untrusting, proxy: px(okHTTP), url: secure.url("/ip"), want: fetcher.TLS},
		{name: "caller canceled", ctx: canceled, proxy: px(okHTTP), url: plain.url("/ip"), want: fetcher.Canceled},
		{name: "unsupported proxy scheme", proxy: &url.URL{Scheme: "ftp", Host: "127.0.0.1:21"}, url: plain.url("/ip"), want: fetcher.Other},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Timeout == 0 {
				cfg = quick
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			f := newFetcher(t, cfg)
			resp, err := f.Do(ctx, fetcher.Request{URL: tc.url, Proxy: tc.proxy})
			checkClassified(t, resp, err, tc.want, tc.proxy, wrong)
		})
	}
	checkLogsHide(t, logs, wrong, farm)
}

// checkLogsHide asserts some failures were logged, none with a password.
func checkLogsHide(t *testing.T, logs *observer.ObservedLogs, wrong string, farm *testbed.Farm) {
	t.Helper()
	secrets := []string{wrong}
	for _, p := range farm.Proxies() {
		secrets = append(secrets, p.Password)
	}
	if logs.FilterMessage("fetch failed").Len() == 0 {
		t.Fatal("no failure was logged")
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("log %q shows a password", line)
			}
		}
	}
}

// checkClassified asserts err is an *Error of kind want, matching its
// sentinel and ProxyFault, with no password in sight.
func checkClassified(t *testing.T, resp *fetcher.Response, err error, want fetcher.ErrorKind, proxy *url.URL, secrets ...string) {
	t.Helper()
	var fe *fetcher.Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (resp %v), want *fetcher.Error", err, resp)
	}
	if fe.Kind != want {
		t.Fatalf("kind = %s, want %s (err: %v)", fe.Kind, want, err)
	}
	if resp != nil {
		t.Errorf("got a response with a %s error", want)
	}
	sentinel := map[fetcher.ErrorKind]error{
		fetcher.ProxyRefused: fetcher.ErrProxyRefused, fetcher.ProxyAuth: fetcher.ErrProxyAuth,
		fetcher.ProxyTimeout: fetcher.ErrProxyTimeout, fetcher.TargetTimeout: fetcher.ErrTargetTimeout,
		fetcher.TLS: fetcher.ErrTLS, fetcher.Canceled: fetcher.ErrCanceled, fetcher.Other: fetcher.ErrOther,
	}[want]
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(err, %v) = false", sentinel)
	}
	var pf interface{ ProxyFault() bool }
	wantFault := want == fetcher.ProxyRefused || want == fetcher.ProxyAuth || want == fetcher.ProxyTimeout
	if !errors.As(err, &pf) || pf.ProxyFault() != wantFault {
		t.Errorf("ProxyFault() = %v, want %v", pf != nil && pf.ProxyFault(), wantFault)
	}
	if proxy != nil {
		if pass, ok := proxy.User.Password(); ok {
			secrets = append(secrets, pass)
		}
		if want := mask.URL(proxy.String()); fe.Proxy != want {
			t.Errorf("Proxy = %q, want masked %q", fe.Proxy, want)
		}
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q shows the password", err)
		}
	}
}
