package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/testbed"
)

// webProc is a `crawlq web` process: the URL it logged as up, or its
// stderr when it exited without serving.
type webProc struct {
	url    string
	stderr []string
	err    error
}

// startWeb runs `crawlq web` with args against the test Redis, without
// CRAWLQ_WEB_AUTH, and reads its JSON log until it is up or has exited;
// a process that serves is killed after the test.
func startWeb(t *testing.T, args ...string) webProc {
	t.Helper()
	t.Setenv("CRAWLQ_WEB_AUTH", "")
	raw, _ := json.Marshal(append([]string{"--redis", testredis.URL(t, testredis.DBCmd), "--log-json", "web"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var p webProc
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		masktest.Check(t, "crawlq web (stderr)", sc.Text())
		var line struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "web: dashboard up" {
			p.url = line.URL
			return p
		}
		p.stderr = append(p.stderr, sc.Text())
	}
	p.err = cmd.Wait()
	return p
}

// loopbackURL is u with its host (every interface, as logged) replaced by
// 127.0.0.1, keeping the port.
func loopbackURL(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.Host = net.JoinHostPort("127.0.0.1", parsed.Port())
	return parsed.String()
}

func TestWebRefusesBeyondLoopbackWithoutAuth(t *testing.T) {
	p := startWeb(t, "--listen", "0.0.0.0:0")
	if p.url != "" {
		t.Fatalf("serving at %s on every interface without --auth", p.url)
	}
	if p.err == nil || len(p.stderr) != 1 {
		t.Fatalf("exit %v, stderr %d lines, want a failure with one line:\n%s", p.err, len(p.stderr), strings.Join(p.stderr, "\n"))
	}
	for _, want := range []string{"web: 0.0.0.0:0: listening beyond loopback", "--auth USER:PASS", "--insecure-no-auth"} {
		if !strings.Contains(p.stderr[0], want) {
			t.Errorf("refusal %q does not say %q", p.stderr[0], want)
		}
	}
}

func TestWebInsecureNoAuthServesBeyondLoopback(t *testing.T) {
	p := startWeb(t, "--listen", "0.0.0.0:0", "--insecure-no-auth")
	if p.url == "" {
		t.Fatalf("not up (%v):\n%s", p.err, strings.Join(p.stderr, "\n"))
	}
	resp, err := http.Get(loopbackURL(t, p.url) + "monitoring/api/queues")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /monitoring/api/queues: %s", resp.Status)
	}
}

// TestWebServesHTTPS: --tls-cert and --tls-key serve HTTPS with that pair.
func TestWebServesHTTPS(t *testing.T) {
	certFile, keyFile, pool := writeServerCert(t)
	p := startWeb(t, "--listen", "127.0.0.1:0", "--auth", "admin:pw", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(p.url, "https://127.0.0.1:") {
		t.Fatalf("up at %q (%v), want https on loopback:\n%s", p.url, p.err, strings.Join(p.stderr, "\n"))
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, p.url+"api/summary", nil)
	req.SetBasicAuth("admin", "pw")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Errorf("GET %sapi/summary: %s", p.url, resp.Status)
	}
}

func TestDemoRefusesListenBeyondLoopback(t *testing.T) {
	_, err := run(t, "demo", "--listen", "0.0.0.0:0", "--duration", "1ns", "--json")
	if err == nil || !strings.Contains(err.Error(), "loopback only") || !strings.Contains(err.Error(), "crawlq web --auth USER:PASS") {
		t.Fatalf("demo --listen 0.0.0.0:0: %v, want the loopback-only refusal", err)
	}
}

// writeServerCert writes a loopback certificate of a new testbed CA and
// its key as PEM files; pool trusts the CA.
func writeServerCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	ca, err := testbed.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServerCert()
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := os.WriteFile(certFile, chain, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca.Pool()
}
