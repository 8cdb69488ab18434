package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"crawlq/internal/heartbeat"
	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
)

// mainEnv makes the test binary run crawlq's main with the JSON-encoded
// arguments it holds, so tests see exactly what a user's terminal sees.
const mainEnv = "CRAWLQ_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if raw := os.Getenv(mainEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"crawlq"}, args...)
		main()
		os.Exit(0)
	}
	os.Exit(masktest.Main(m))
}

// runMain runs crawlq as a process and returns its stdout and stderr.
func runMain(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	where := "crawlq " + strings.Join(args, " ")
	masktest.Check(t, where+" (stdout)", out.String())
	masktest.Check(t, where+" (stderr)", errb.String())
	return out.String(), errb.String(), err
}

// TestRedisDownPrintsOneLine: with Redis down, a command prints crawlq's
// one clear error on stderr and nothing of go-redis's own logger.
func TestRedisDownPrintsOneLine(t *testing.T) {
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"proxies", "list"}, {"status", "--json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			url := "redis://:" + masktest.RedisPassword + "@127.0.0.1:" + strconv.Itoa(port) + "/0"
			_, stderr, err := runMain(t, append([]string{"--redis", url}, args...)...)
			if err == nil {
				t.Fatal("exit status 0 with Redis down")
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "crawlq: redis at") || strings.Contains(stderr, masktest.RedisPassword) {
				t.Fatalf("stderr has %d lines, want crawlq's one error (password masked):\n%s", len(lines), stderr)
			}
		})
	}
}

// TestVersion: --version prints the version and commit a worker's
// heartbeat reports, and exits 0.
func TestVersion(t *testing.T) {
	stdout, stderr, err := runMain(t, "--version")
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, stderr)
	}
	if want := "crawlq version " + heartbeat.Version() + "\n"; stdout != want {
		t.Errorf("--version printed %q, want %q", stdout, want)
	}
}
