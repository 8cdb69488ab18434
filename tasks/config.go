package tasks

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"crawlq/detect"
	"crawlq/internal/yamlstrict"
	"crawlq/proxies"
	"crawlq/tasks/site"
)

// Config is crawlq's YAML configuration file (--config):
//
//	sites:               # per-site overrides (see tasks/site.Config)
//	  wildberries: {base_url: http://127.0.0.1:8081, min_interval: 500ms}
//	rules: rules.yaml    # detect rules merged over the built-ins
//	tls: {ca_file: ca.pem} # extra CA trusted for every site (also per site: sites.X.tls.ca_file)
//	broker:
//	  mode: shared       # shared, exclusive or partitioned
//	  pipelines: 4       # round trips in flight shared by concurrent leases; -1: none
type Config struct {
	site.Config `yaml:",inline"`
	// Rules is a detect rules file, relative to the config file.
	Rules string `yaml:"rules"`
	// TLS adds a CA trusted for every site.
	TLS site.TLSConfig `yaml:"tls"`
	// Broker holds the broker's mode and round-trip sharing
	// (proxies.Config.Pipelines; 0 for the default).
	Broker struct {
		Mode      string `yaml:"mode"`
		Pipelines int    `yaml:"pipelines"`
	} `yaml:"broker"`
}

// Loaded is a configuration applied: the site registry, detect rules and
// broker mode to run with.
type Loaded struct {
	Sites *site.Registry
	Rules detect.Rules
	Mode  proxies.Mode
	// Pipelines is the broker's proxies.Config.Pipelines (0: its default).
	Pipelines int
	// TLS is the fetcher's TLS config: the system roots plus the CA files
	// of the config; nil when it names none.
	TLS *tls.Config
	// CAFiles are the config's CA files, for the browser tier.
	CAFiles []string
}

// LoadConfig reads path ("" for none) and applies it to a copy of the
// default registry. Errors name the file and the field (and line where
// the YAML decoder knows it); nothing is applied on error.
func LoadConfig(path string) (*Loaded, error) {
	l := &Loaded{Sites: site.Default().Clone(), Rules: detect.Builtin(), Mode: proxies.ModeShared}
	if path == "" {
		return l, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, yamlstrict.WithFile(err, path)
	}
	return l, l.apply(cfg, filepath.Dir(path), path)
}

// ParseConfig decodes a config strictly: an unknown key, a value of the
// wrong kind or a second document is a *yamlstrict.Error naming the line
// and the place ("unknown field "base_ulr" in sites.avito (did you mean
// base_url?)").
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	if err := yamlstrict.Decode(data, &cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func (l *Loaded) apply(cfg Config, dir, path string) error {
	if err := l.Sites.Apply(cfg.Config); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if cfg.Broker.Mode != "" {
		m, err := proxies.ParseMode(cfg.Broker.Mode)
		if err != nil {
			return fmt.Errorf("%s: broker.mode: %w", path, err)
		}
		l.Mode = m
	}
	if p := cfg.Broker.Pipelines; p < -1 {
		return fmt.Errorf("%s: broker.pipelines: %d: want -1 (one round trip per script) or a count of 1 or more", path, p)
	}
	l.Pipelines = cfg.Broker.Pipelines
	t, err := trustedCAs(cfg, dir, path)
	if err != nil {
		return err
	}
	l.TLS = t
	for _, f := range caFiles(cfg, dir) {
		l.CAFiles = append(l.CAFiles, f.path)
	}
	if cfg.Rules != "" {
		rp := cfg.Rules
		if !filepath.IsAbs(rp) {
			rp = filepath.Join(dir, rp)
		}
		r, err := detect.LoadRules(rp)
		if err != nil {
			return err
		}
		l.Rules = r
	}
	return nil
}

// BrokerConfig is the broker policy of the loaded sites and mode.
func (l *Loaded) BrokerConfig() proxies.Config {
	c := BrokerConfig(l.Sites, nil)
	c.Mode = l.Mode
	c.Pipelines = l.Pipelines
	return c
}
