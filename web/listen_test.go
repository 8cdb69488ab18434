package web

import (
	"context"
	"crawlq/internal/mask/masktest"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestAdmit(t *testing.T) {
	anywhere := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	tests := []struct {
		name     string
		addr     net.Addr
		auth     string
		insecure bool
		tls      bool
		refused  bool
		warning  string
	}{
		{name: "loopback without auth", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}},
		{name: "loopback v6 without auth", addr: &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}},
		{name: "all interfaces without auth", addr: anywhere, refused: true},
		{name: "all interfaces v6 without auth", addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, refused: true},
		{name: "lan address without auth", addr: &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 8080}, refused: true},
		{name: "insecure no auth", addr: anywhere, insecure: true, warning: "without auth (--insecure-no-auth)"},
		{name: "auth over plain http", addr: anywhere, auth: "u:p", warning: "basic auth over plain HTTP"},
		{name: "auth over https", addr: anywhere, auth: "u:p", tls: true},
		{name: "auth wins over insecure", addr: anywhere, auth: "u:p", insecure: true, tls: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			s := &Server{cfg: Config{Auth: tt.auth, InsecureNoAuth: tt.insecure}, log: zap.New(zapcore.NewTee(core, masktest.Core(t)))}
			if tt.tls {
				s.tls = &tls.Config{}
			}
			err := s.admit(tt.addr, tt.addr.String())
			if refused := errors.Is(err, ErrNoAuth); refused != tt.refused {
				t.Fatalf("admit(%v) = %v, want refused=%t", tt.addr, err, tt.refused)
			}
			if tt.refused {
				checkRefusal(t, err.Error())
			}
			switch {
			case tt.warning == "" && logs.Len() != 0:
				t.Errorf("warned %v, want no warning", logs.All())
			case tt.warning != "" && (logs.Len() != 1 || !strings.Contains(logs.All()[0].Message, tt.warning)):
				t.Errorf("warned %v, want one warning with %q", logs.All(), tt.warning)
			}
		})
	}
}

// checkRefusal: the refusal is one line saying what is refused; the CLI
// names both ways out, its flags (cmd/crawlq's
// TestWebRefusesBeyondLoopbackWithoutAuth).
func checkRefusal(t *testing.T, msg string) {
	t.Helper()
	for _, want := range []string{"beyond loopback without auth", "whoever reaches the port could manage the queues"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %s", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal %q is more than one line", msg)
	}
}

// TestServeRefusesBeyondLoopbackWithoutAuth: a listener on every interface
// is closed at once, so nothing answers on its port.
func TestServeRefusesBeyondLoopbackWithoutAuth(t *testing.T) {
	c := newCluster(t)
	s, err := NewServer(Config{Redis: c.opt, Broker: c.broker})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, l) }()
	// Whether the refusal closed the listener before or after this dial,
	// the connection is refused or reset: nothing is served.
	if resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/monitoring/api/queues"); err == nil {
		resp.Body.Close()
		t.Errorf("served %s on every interface without auth", resp.Status)
	}
	cancel()
	if err := <-errc; !errors.Is(err, ErrNoAuth) {
		t.Fatalf("Serve on %s = %v, want ErrNoAuth", l.Addr(), err)
	}
}

func TestInsecureNoAuthServesBeyondLoopback(t *testing.T) {
	c := newCluster(t)
	port := serveOn(t, Config{Redis: c.opt, Broker: c.broker, InsecureNoAuth: true}, "0.0.0.0:0")
	code, body := get(t, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/monitoring/api/queues", "")
	if code != http.StatusOK || !strings.Contains(body, "wildberries") {
		t.Errorf("GET /monitoring/api/queues: %d %s", code, body)
	}
}

// TestTLSServesHTTPS serves a self-signed pair made here: a client that
// trusts it reaches every path over HTTPS, and plain HTTP is not served.
func TestTLSServesHTTPS(t *testing.T) {
	c := newCluster(t)
	certFile, keyFile, pool := selfSigned(t)
	port := serveOn(t, Config{Redis: c.opt, Broker: c.broker, Auth: "admin:pw", TLSCert: certFile, TLSKey: keyFile}, "127.0.0.1:0")
	base := "127.0.0.1:" + strconv.Itoa(port)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, p := range allPaths {
		req, _ := http.NewRequest(http.MethodGet, "https://"+base+p, nil)
		req.SetBasicAuth("admin", "pw")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET https://%s%s: %v", base, p, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.TLS == nil {
			t.Errorf("GET https://%s%s: status %d, TLS %v", base, p, resp.StatusCode, resp.TLS != nil)
		}
	}
	if code, _ := get(t, http.MethodGet, "http://"+base+"/", "admin:pw"); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS port: status %d, want 400", code)
	}
}

func TestTLSPairErrors(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name      string
		cert, key string
		want      error
		names     string
	}{
		{name: "cert without key", cert: certFile, want: ErrTLSPair},
		{name: "key without cert", key: keyFile, want: ErrTLSPair},
		{name: "missing cert file", cert: missing, key: keyFile, want: os.ErrNotExist, names: missing},
		{name: "key given as cert", cert: keyFile, key: keyFile, names: keyFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewServer(Config{Redis: newCluster(t).opt, TLSCert: tt.cert, TLSKey: tt.key})
			if err == nil {
				s.Close()
				t.Fatal("NewServer accepted the pair")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.names) {
				t.Errorf("error %q does not name %s", err, tt.names)
			}
		})
	}
}

// serveOn serves a dashboard for cfg on addr until the test ends and
// returns its port.
func serveOn(t *testing.T, cfg Config, addr string) int {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files and returns them with a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "crawlq test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
