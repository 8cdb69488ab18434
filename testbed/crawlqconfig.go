package testbed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// ConfigMargin is how much slower than a site's own limit the crawlq
// configuration of CrawlqConfig paces each proxy: the limit is what the
// testbed punishes, and clocks and queues jitter.
const ConfigMargin = 1.5

// CrawlqConfig is a crawlq configuration file (--config) that points
// crawlq at this testbed while it runs (its ports change with every run):
// each site's base_url at its HTTPS listener with the testbed's CA
// trusted, class datacenter (what `crawlq proxies import` makes of the
// farm's proxies), Wildberries' basket CDN at the testbed's basket host
// names, a min_interval ConfigMargin times the site's limit,
// and the cookie each site's challenge clears with. MobileSites gives
// sites the class mobile instead, for the modems.
func (tb *Testbed) CrawlqConfig(opts ...ConfigOption) []byte {
	var o configOptions
	for _, opt := range opts {
		opt(&o)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# crawlq configuration for the running `crawlq testbed` (its ports change with every run).\n")
	fmt.Fprintf(&b, "#   crawlq proxies import %s\n", tb.ProxiesFile)
	fmt.Fprintf(&b, "#   crawlq worker --config THIS_FILE\n")
	fmt.Fprintf(&b, "tls: {ca_file: %s}   # the testbed's CA, made for this run\n", quote(tb.CAFile))
	fmt.Fprintf(&b, "sites:\n")
	for _, name := range tb.siteNames() {
		r := tb.rules[name]
		fmt.Fprintf(&b, "  %s:\n    base_url: %s\n", name, quote(tb.HTTPSSiteURL(name)))
		if slices.Contains(o.mobile, name) {
			fmt.Fprintf(&b, "    class: mobile   # the modems: crawlq proxies import --class mobile %s\n", tb.ModemsFile())
		} else {
			fmt.Fprintf(&b, "    class: datacenter   # the class `crawlq proxies import` gives the farm's proxies\n")
		}
		if name == SiteWildberries {
			fmt.Fprintf(&b, "    endpoints: {basket: %s}   # the basket hosts, named through the farm's proxies\n", quote(tb.BasketPattern(true)))
		}
		if r.MinInterval > 0 {
			d := time.Duration(float64(r.MinInterval) * ConfigMargin)
			fmt.Fprintf(&b, "    min_interval: %s   # the testbed punishes an IP faster than %s\n", d, r.MinInterval)
		}
		if c := ChallengeCookie[name]; c != "" {
			fmt.Fprintf(&b, "    challenge: {cookie: %s}\n", quote(c))
		}
	}
	return b.Bytes()
}

// ConfigOption changes the configuration CrawlqConfig writes.
type ConfigOption func(*configOptions)

type configOptions struct {
	mobile []string
}

// MobileSites gives the named sites the class mobile: their jobs lease
// the testbed's modems (imported with --class mobile) instead of the
// farm's proxies.
func MobileSites(names ...string) ConfigOption {
	return func(o *configOptions) { o.mobile = append(o.mobile, names...) }
}

// ModemsFile is where the modems' lines go, modems.txt beside
// ProxiesFile; "" without modems.
func (tb *Testbed) ModemsFile() string {
	if tb.Modems == nil {
		return ""
	}
	return filepath.Join(filepath.Dir(tb.ProxiesFile), "modems.txt")
}

// siteNames are the running sites, sorted.
func (tb *Testbed) siteNames() []string {
	names := make([]string, 0, len(tb.sites))
	for name := range tb.sites {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// quote writes s as a YAML double-quoted scalar (JSON's string syntax is
// YAML's).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
