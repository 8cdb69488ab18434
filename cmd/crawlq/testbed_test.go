package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/testbed"
)

// TestTestbedSaysHowToPointCrawlqAtIt: `testbed --help` names
// --write-config and the commands that use its file; a running testbed
// writes a config crawlq loads, with each site at the testbed's https
// listener, its CA trusted, the farm's class and a min_interval the
// testbed tolerates, Wildberries' basket CDN at the testbed's basket host
// names, and --json names the file.
func TestTestbedSaysHowToPointCrawlqAtIt(t *testing.T) {
	help, _, err := runMain(t, "testbed", "--help")
	for _, want := range []string{"--write-config FILE", "crawlq proxies import", "crawlq worker --config", `"config_file"`} {
		if err != nil || !strings.Contains(help, want) {
			t.Errorf("testbed --help (%v) lacks %q:\n%s", err, want, help)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "testbed.yaml")
	info := startTestbed(t, "--proxies", "1", "--dir", dir, "--write-config", path)
	if info.ConfigFile != path {
		t.Fatalf("--json config_file %q, want %q", info.ConfigFile, path)
	}
	l, err := tasks.LoadConfig(path)
	if err != nil {
		t.Fatalf("crawlq does not load the testbed's config: %v", err)
	}
	if !slices.Contains(l.CAFiles, info.CAFile) {
		t.Errorf("config trusts %v, want the testbed's CA %s", l.CAFiles, info.CAFile)
	}
	limits := testbed.DefaultRules()
	for name, url := range info.HTTPSSites {
		s, err := l.Sites.Get(name)
		if err != nil || s.BaseURL != url || s.Class != proxies.Datacenter || s.MinInterval < limits[name].MinInterval {
			t.Errorf("site %s: %+v %v; want base_url %s, class datacenter, min_interval at least %s", name, s, err, url, limits[name].MinInterval)
		}
		port := url[strings.LastIndex(url, ":"):]
		if want := "https://basket-NN." + testbed.BasketDomain + port; name == testbed.SiteWildberries && (s == nil || s.Endpoints["basket"] != want) {
			t.Errorf("wildberries basket endpoint: want %s, the testbed's basket hosts", want)
		}
	}
}

// startTestbed runs `crawlq testbed --json args…` until the test ends and
// returns its first stdout line.
func startTestbed(t *testing.T, args ...string) testbedInfo {
	t.Helper()
	raw, _ := json.Marshal(append([]string{"testbed", "--json"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	cmd.Stderr = masktest.Writer(t, "crawlq testbed (stderr)")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadBytes('\n')
	var info testbedInfo
	if err != nil || json.Unmarshal(line, &info) != nil {
		t.Fatalf("testbed --json: first line %q: %v", line, err)
	}
	return info
}

// TestTestbedModems: `crawlq testbed --modems 2` writes the modems' lines
// beside the farm's, and `proxies import` takes them as modems; its
// config gives avito the class mobile (the modems) and the other sites
// datacenter (the farm); a bad --avito-volume is named.
func TestTestbedModems(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	info := startTestbed(t, "--proxies", "1", "--dir", t.TempDir(), "--modems", "2", "--modem-every", "2s",
		"--modem-settle", "500ms", "--avito-volume", "60/90s")
	raw, err := os.ReadFile(info.ModemsFile)
	if err != nil || strings.Count(string(raw), "change=") != 2 || !strings.Contains(string(raw), "change_every=2s") {
		t.Fatalf("modems file %q: %q, %v", info.ModemsFile, raw, err)
	}
	if out, err := run(t, "proxies", "import", "--class", "mobile", info.ModemsFile); err != nil || !strings.Contains(out, "2 new") {
		t.Fatalf("import the modems: %q, %v", out, err)
	}
	l, err := tasks.LoadConfig(info.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]proxies.Class{testbed.SiteAvito: proxies.Mobile, testbed.SiteOzon: proxies.Datacenter,
		testbed.SiteWildberries: proxies.Datacenter} {
		if s, err := l.Sites.Get(name); err != nil || s.Class != want {
			t.Errorf("site %s in the --modems config: %+v %v, want class %s", name, s, err, want)
		}
	}
	if out, err := run(t, "proxies", "stats"); err != nil || !strings.Contains(out, "Modems: 2, 0 rotating") || strings.Contains(out, testbed.DefaultModemKey) {
		t.Fatalf("proxies stats:\n%s\n%v", out, err)
	}
	_, stderr, err := runMain(t, "testbed", "--avito-volume", "lots")
	if err == nil || !strings.Contains(stderr, `--avito-volume "lots"`) {
		t.Fatalf("a bad --avito-volume: %v\n%s", err, stderr)
	}
}

// TestTestbedRefusesAMissingDir: a --dir or a --write-config directory
// that does not exist is refused before anything starts, on one line.
func TestTestbedRefusesAMissingDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing --dir", []string{"--dir", missing}, "crawlq: --dir " + missing + ": no directory " + missing + " (create it first)"},
		{"--dir a file", []string{"--dir", file}, "crawlq: --dir " + file + ": " + file + " is not a directory"},
		{"missing --write-config dir", []string{"--write-config", filepath.Join(missing, "c.yaml")},
			"crawlq: --write-config " + filepath.Join(missing, "c.yaml") + ": no directory " + missing + " (create it first)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runMain(t, append([]string{"testbed"}, tc.args...)...)
			if err == nil || stdout != "" || stderr != tc.want+"\n" {
				t.Errorf("testbed %v: %v\nstdout %q\nstderr %q\nwant only %q", tc.args, err, stdout, stderr, tc.want)
			}
		})
	}
}
