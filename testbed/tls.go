package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// CA is a certificate authority generated for one testbed run; its
// certificate is what clients must trust to reach the HTTPS sites.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM encoded.
	PEM []byte
}

// NewCA generates a CA valid for a day.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "crawlq testbed CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool is a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// WriteFile writes the CA certificate (PEM) to path.
func (ca *CA) WriteFile(path string) error {
	if err := os.WriteFile(path, ca.PEM, 0o644); err != nil {
		return fmt.Errorf("write ca file: %w", err)
	}
	return nil
}

// ServerCert issues a certificate for the loopback addresses,
// "localhost", CDNHost and the basket hosts (*.BasketDomain), signed by
// the CA.
func (ca *CA) ServerCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "crawlq testbed site"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", CDNHost, "*." + BasketDomain},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("server certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}, nil
}

// startHTTPS gives every site a TLS listener with a certificate of a new
// CA; check turns the fingerprint rule on.
func (tb *Testbed) startHTTPS(check bool) error {
	ca, err := NewCA()
	if err != nil {
		return err
	}
	cert, err := ca.ServerCert()
	if err != nil {
		return err
	}
	tb.CA = ca
	if err := tb.CDN.startTLS(cert, zap.NewNop()); err != nil {
		return err
	}
	for _, s := range tb.sites {
		if err := s.startHTTPS(cert, check); err != nil {
			return err
		}
	}
	return nil
}

// writeCA writes the CA next to the proxy list.
func (tb *Testbed) writeCA() error {
	tb.CAFile = filepath.Join(filepath.Dir(tb.ProxiesFile), "ca.pem")
	return tb.CA.WriteFile(tb.CAFile)
}

// HTTPSSiteURL is the https base URL of site name ("" for an unknown name).
func (tb *Testbed) HTTPSSiteURL(name string) string {
	if s := tb.sites[name]; s != nil {
		return s.HTTPSURL()
	}
	return ""
}

// HTTPSSites maps each site name to its https base URL.
func (tb *Testbed) HTTPSSites() map[string]string {
	out := map[string]string{}
	for name, s := range tb.sites {
		out[name] = s.HTTPSURL()
	}
	return out
}
