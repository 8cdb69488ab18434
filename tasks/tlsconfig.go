package tasks

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// caFile is one ca_file of a config with the field that named it.
type caFile struct{ field, path string }

// caFiles lists the config's CA files, global first, then by site name.
func caFiles(cfg Config, dir string) []caFile {
	var out []caFile
	add := func(field, p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, caFile{field, p})
	}
	add("tls.ca_file", cfg.TLS.CAFile)
	names := make([]string, 0, len(cfg.Sites))
	for n := range cfg.Sites {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		add("sites."+n+".tls.ca_file", cfg.Sites[n].TLS.CAFile)
	}
	return out
}

// trustedCAs is a TLS config trusting the system roots and every CA file
// of cfg (nil when it names none); path names the config in errors. The
// CAs of all sites go into one pool: a site's CA is trusted for the
// others too, which only matters if one CA signs for another's hosts.
func trustedCAs(cfg Config, dir, path string) (*tls.Config, error) {
	files := caFiles(cfg, dir)
	if len(files) == 0 {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		pem, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.field, err)
		}
		if !pool.AppendCertsFromPEM(pem) || !strings.Contains(string(pem), "CERTIFICATE") {
			return nil, fmt.Errorf("%s: %s: %s holds no PEM certificate", path, f.field, f.path)
		}
	}
	return &tls.Config{RootCAs: pool}, nil
}
