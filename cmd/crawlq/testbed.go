package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"crawlq/testbed"
)

// newTestbedCmd is `crawlq testbed`: the simulated sites and proxy farm.
func newTestbedCmd(a *app) *cobra.Command {
	var o testbedOpts
	cmd := &cobra.Command{
		Use:   "testbed",
		Short: "Run the simulated Wildberries, Ozon and Avito and a loopback proxy farm until interrupted",
		Long:  testbedLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTestbed(cmd, a, o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.proxies, "proxies", 20, "number of farm proxies (127.0.0.2 upwards)")
	f.Int64Var(&o.seed, "seed", 1, "seed of the catalog, sessions and flaky proxies")
	f.BoolVar(&o.strict, "strict", false, "ban an IP that is too fast for the rest of the run")
	f.BoolVar(&o.json, "json", false, `print {"sites":…,"https_sites":…,"ca_file":…,"proxies_file":…,"config_file":…,"proxies":N} as the first stdout line`)
	f.StringVar(&o.writeConfig, "write-config", "", "write the crawlq config that points crawlq at this testbed to FILE (default: crawlq.yaml next to proxies.txt)")
	f.BoolVar(&o.fingerprint, "fingerprint", false, "HTTPS sites refuse a client whose TLS/HTTP2 fingerprint is not the browser its User-Agent claims")
	f.BoolVar(&o.challenge, "challenge", false, "every site puts a JavaScript challenge in front of new visitors (Wildberries' __internal APIs answer 498 without the x_wbaas_token its home page mints)")
	f.BoolVar(&o.auth, "auth", true, "farm proxies require a username and password")
	f.IntVar(&o.socks5Every, "socks5-every", 0, "make every k-th proxy a SOCKS5 proxy (0: none)")
	f.DurationVar(&o.priceEvery, "price-every", testbed.DefaultPriceEvery, "testbed time between two price steps: at each, about one product in 12 changes its price or stock (e.g. 5s to watch prices move; 0: prices never move)")
	f.StringVar(&o.dir, "dir", "", "directory for proxies.txt (default: a temporary one)")
	f.IntVar(&o.modems, "modems", 0, "also run N mobile modems (127.0.5.x, each one exit IP at a time from 127.0.6.x, a change-IP link); their lines go to modems.txt, and the written config gives avito the class mobile so its jobs use them")
	f.DurationVar(&o.modemEvery, "modem-every", testbed.DefaultModemMinInterval, "with --modems: the least time between two IP changes of a modem (a change sooner is refused 429)")
	f.DurationVar(&o.modemSettle, "modem-settle", testbed.DefaultModemSettle, "with --modems: how long a modem is offline after a change")
	f.StringVar(&o.avitoVolume, "avito-volume", "", `Avito bans an IP after N requests within a window, e.g. "600/15m" (reported in 2025-2026: stable for 10-15 minutes, then banned); "" for none`)
	return cmd
}

type testbedOpts struct {
	proxies, socks5Every int
	seed                 int64
	strict, json, auth   bool
	fingerprint          bool
	challenge            bool
	dir, writeConfig     string
	priceEvery           time.Duration
	modems               int
	modemEvery           time.Duration
	modemSettle          time.Duration
	avitoVolume          string
}

// testbedLong is `crawlq testbed --help`: how to point crawlq at it.
const testbedLong = `Run the simulated Wildberries, Ozon and Avito (http and https) and a proxy farm
on loopback addresses until interrupted.

Point crawlq at it with the config file it writes (crawlq.yaml next to
proxies.txt, or --write-config FILE; its path is in the output and in
--json's "config_file"): each site's base_url at the testbed's https
listener, its CA (tls.ca_file), class datacenter (what proxies import gives
the farm's proxies) and a min_interval the testbed tolerates:

  crawlq testbed --write-config testbed.yaml
  crawlq proxies import PROXIES_FILE          # the proxies file it prints
  crawlq worker --config testbed.yaml
  crawlq enqueue --config testbed.yaml wildberries search "кофе"

The ports change with every run: write the config again after a restart.`

// testbedInfo is the --json line.
type testbedInfo struct {
	Sites       map[string]string `json:"sites"`
	HTTPSSites  map[string]string `json:"https_sites"`
	CAFile      string            `json:"ca_file"`
	ProxiesFile string            `json:"proxies_file"`
	// ConfigFile is the crawlq config that points crawlq at the testbed.
	ConfigFile string `json:"config_file"`
	Proxies    int    `json:"proxies"`
	// ModemsFile lists the modems' lines (--modems), with their change
	// links.
	ModemsFile string `json:"modems_file,omitempty"`
}

// addModems applies --modems and --avito-volume to cfg.
func (o testbedOpts) addModems(cfg *testbed.Config) error {
	if o.modems < 0 {
		return fmt.Errorf("--modems %d: want 0 or more", o.modems)
	}
	if o.modems > 0 {
		if o.modemEvery <= 0 || o.modemSettle < 0 {
			return fmt.Errorf("--modem-every %s, --modem-settle %s: want a positive interval and a settle of 0 or more", o.modemEvery, o.modemSettle)
		}
		cfg.Modems = &testbed.ModemConfig{N: o.modems, MinInterval: o.modemEvery, Settle: o.modemSettle}
	}
	if o.avitoVolume == "" {
		return nil
	}
	n, w, ok := strings.Cut(o.avitoVolume, "/")
	req, err1 := strconv.Atoi(n)
	win, err2 := time.ParseDuration(w)
	if !ok || err1 != nil || err2 != nil || req < 1 || win <= 0 {
		return fmt.Errorf("--avito-volume %q: want REQUESTS/WINDOW, e.g. 600/15m", o.avitoVolume)
	}
	cfg.Sites = map[string]testbed.SiteRules{testbed.SiteAvito: testbed.AvitoVolumeRules(testbed.VolumeRule{Requests: req, Window: win})}
	return nil
}

// checkPaths refuses, before anything starts, a --dir or a
// --write-config directory that is not an existing directory.
func (o testbedOpts) checkPaths() error {
	if o.dir != "" {
		if err := existingDir(o.dir); err != nil {
			return fmt.Errorf("--dir %s: %w", o.dir, err)
		}
	}
	if o.writeConfig != "" {
		if err := existingDir(filepath.Dir(o.writeConfig)); err != nil {
			return fmt.Errorf("--write-config %s: %w", o.writeConfig, err)
		}
	}
	return nil
}

// existingDir says what is wrong when dir is no existing directory.
func existingDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no directory %s (create it first)", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// writeModems writes the modems' lines to modems.txt beside proxies.txt;
// "" without modems.
func writeModems(tb *testbed.Testbed) (string, error) {
	file := tb.ModemsFile()
	if file == "" {
		return "", nil
	}
	if err := os.WriteFile(file, []byte(strings.Join(tb.ModemLines(), "\n")+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", file, err)
	}
	return file, nil
}

// config is the testbed the flags describe, checked.
func (o testbedOpts) config(log *zap.Logger) (testbed.Config, error) {
	if o.proxies < 1 {
		return testbed.Config{}, fmt.Errorf("--proxies %d: want at least 1", o.proxies)
	}
	if err := o.checkPaths(); err != nil {
		return testbed.Config{}, err
	}
	cfg := testbed.Config{Proxies: o.proxies, Seed: o.seed, Strict: o.strict, Dir: o.dir,
		Fingerprint: o.fingerprint, Challenge: o.challenge, PriceEvery: priceEvery(o.priceEvery),
		Farm: testbed.FarmConfig{Auth: o.auth, SOCKS5Every: o.socks5Every}, Logger: log}
	err := o.addModems(&cfg)
	return cfg, err
}

func runTestbed(cmd *cobra.Command, a *app, o testbedOpts) error {
	log, err := a.logger()
	if err != nil {
		return err
	}
	defer log.Sync()
	cfg, err := o.config(log)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	tb, err := testbed.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer tb.Close()
	modemsFile, err := writeModems(tb)
	if err != nil {
		return err
	}
	cfgFile, err := writeTestbedConfig(tb, o.writeConfig)
	if err != nil {
		return err
	}
	info := testbedInfo{Sites: tb.Sites(), HTTPSSites: tb.HTTPSSites(), CAFile: tb.CAFile,
		ProxiesFile: tb.ProxiesFile, ConfigFile: cfgFile, Proxies: tb.Farm.Len(), ModemsFile: modemsFile}
	if o.json {
		json.NewEncoder(os.Stdout).Encode(info)
	} else {
		printTestbed(info)
	}
	log.Info("testbed running; interrupt to stop", zap.Any("sites", info.Sites), zap.String("proxies_file", info.ProxiesFile))
	<-ctx.Done()
	logTestbedStopped(log, tb)
	return nil
}

// logTestbedStopped logs what the testbed's checker counted over its run.
func logTestbedStopped(log *zap.Logger, tb *testbed.Testbed) {
	r := tb.Check()
	log.Info("testbed stopped", zap.Int("requests", r.Requests), zap.Int("i1_violations", r.I1Violations),
		zap.Int("i2_violations", r.I2Violations), zap.Any("bans_per_ip", r.BansPerIP),
		zap.Int("fingerprint_refusals", tb.Log.FingerprintRefusals()), zap.Any("challenges", tb.Log.Challenges()))
}

// writeTestbedConfig writes a crawlq config for tb to file (default
// crawlq.yaml beside the proxies file) and returns its path; with modems,
// Avito has the class mobile, else no site would use them.
func writeTestbedConfig(tb *testbed.Testbed, file string) (string, error) {
	if file == "" {
		file = filepath.Join(filepath.Dir(tb.ProxiesFile), "crawlq.yaml")
	}
	var cfgOpts []testbed.ConfigOption
	if tb.Modems != nil {
		cfgOpts = append(cfgOpts, testbed.MobileSites(testbed.SiteAvito))
	}
	if err := os.WriteFile(file, tb.CrawlqConfig(cfgOpts...), 0o644); err != nil {
		return "", fmt.Errorf("--write-config: %w", err)
	}
	return file, nil
}

// priceEvery is --price-every as testbed.Config has it: 0 (prices never
// move) is negative there.
func priceEvery(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}

func printTestbed(info testbedInfo) {
	for name, url := range info.Sites {
		fmt.Printf("%-12s %s  %s\n", name, url, info.HTTPSSites[name])
	}
	fmt.Printf("ca           %s\n", info.CAFile)
	fmt.Printf("proxies      %d in %s (crawlq proxies import %[2]s)\n", info.Proxies, info.ProxiesFile)
	fmt.Printf("config       %s (crawlq worker --config %[1]s)\n", info.ConfigFile)
	if info.ModemsFile != "" {
		fmt.Printf("modems       %s (crawlq proxies import --class mobile %[1]s; the config gives avito the class mobile: its jobs use the modems)\n", info.ModemsFile)
	}
}
