package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results/pgsink"
)

// TestAlertCLI: add (bad input refused naming the flag), list (the
// webhook's secret masked), test (one post with an Idempotency-Key, its
// status printed), remove, as a user runs them.
func TestAlertCLI(t *testing.T) {
	pg := testpg.DB(t)
	var mu sync.Mutex
	var keys []string
	var body pgsink.Alert
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		_ = json.NewDecoder(r.Body).Decode(&body)
	}))
	defer srv.Close()
	hook := srv.URL + "/bot99:" + masktest.WebhookToken + "/sendMessage?chat_id=7#" + masktest.WebhookFragment
	run := func(args ...string) (string, string, error) {
		return runMain(t, append(append([]string{"alert"}, args...), "--postgres", pg)...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "x", "--site", "ozon", "--drop-pct", "-3", "--webhook", hook}, "--drop-pct -3"},
		{[]string{"add", "x", "--site", "ozon", "--below", "cheap", "--webhook", hook}, `--below "cheap"`},
		{[]string{"add", "x", "--site", "amazon", "--drop-pct", "5", "--webhook", hook}, `--site: unknown site "amazon"`},
		{[]string{"add", "x", "--site", "ozon", "--webhook", hook}, "no condition"},
		{[]string{"add", "x", "--site", "ozon", "--drop-pct", "5", "--webhook", "mailto:me"}, "--webhook"},
	} {
		if _, stderr, err := run(c.args...); err == nil || !strings.Contains(stderr, c.want) || strings.Contains(stderr, masktest.WebhookToken) {
			t.Errorf("%v: %v %q, want it to say %q (and no secret)", c.args, err, stderr, c.want)
		}
	}
	out, stderr, err := run("add", "kettles", "--site", "ozon", "--ids", "1,2", "--below", "1999", "--back-in-stock", "--webhook", hook)
	if err != nil || strings.Contains(out, masktest.WebhookToken) || !strings.Contains(out, "price ≤ 1999.00 or back in stock") {
		t.Fatalf("add: %v %s %s", err, out, stderr)
	}
	if _, stderr, err := run("add", "kettles", "--site", "ozon", "--drop-pct", "5", "--webhook", hook); err == nil || !strings.Contains(stderr, "alert rule exists: kettles") {
		t.Errorf("second add: %v %s", err, stderr)
	}
	out, _, err = run("list")
	if err != nil || !strings.Contains(out, "kettles") || !strings.Contains(out, "bot99:***") || strings.Contains(out, masktest.WebhookToken) {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, stderr, err = run("test", "kettles")
	if err != nil || !strings.Contains(out, "answered 200") || strings.Contains(out, masktest.WebhookToken) {
		t.Fatalf("test: %v %s %s", err, out, stderr)
	}
	mu.Lock()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "test:kettles:") || body.Key != keys[0] || body.Text == "" || !body.Test {
		t.Errorf("test posted keys %v, body %+v", keys, body)
	}
	mu.Unlock()
	if out, _, err = run("remove", "kettles"); err != nil || !strings.Contains(out, "removed") {
		t.Fatalf("remove: %v %s", err, out)
	}
	if _, stderr, err := run("remove", "kettles"); err == nil || !strings.Contains(stderr, "no such alert rule: kettles") {
		t.Errorf("second remove: %v %s", err, stderr)
	}
}

// TestStatusSaysAlertsFail: with --postgres, status prints a line when
// an alert's last post failed (pending count, last error with the
// webhook masked, and which rule fails) and status --json carries the
// figures; none while every alert is delivered.
func TestStatusSaysAlertsFail(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	pg := testpg.DB(t)
	ctx := context.Background()
	conn, err := pgsink.Migrated(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if out, _, err := runMain(t, "--redis", url, "status", "--postgres", pg); err != nil || strings.Contains(out, "alerts:") {
		t.Fatalf("status without failing alerts: %v\n%s", err, out)
	}
	for _, name := range []string{"r", "fine"} {
		if err := pgsink.AddRule(ctx, conn, pgsink.Rule{Name: name, Site: "ozon", DropPct: 5, Webhook: "http://127.0.0.1:9/x"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = conn.Exec(ctx, `INSERT INTO alert_outbox (key, rule, site, id, webhook, payload, attempts, last_error, last_try)
	    VALUES ('r:ozon:1:1-0', 'r', 'ozon', '1', 'http://127.0.0.1:9/bot1:SECRET/x', '{}', 3,
	            'webhook http://127.0.0.1:9/bot1:***/***: answered 500 Internal Server Error', now())`)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runMain(t, "--redis", url, "status", "--postgres", pg)
	if err != nil || !strings.Contains(out, "alerts: failing: 1 pending (1 failed at least once)") ||
		!strings.Contains(out, "answered 500") || strings.Contains(out, masktest.WebhookToken) ||
		!strings.Contains(out, "\n  rule r (ozon): failing: 1 failing, 0 given up; last error ") || strings.Contains(out, "rule fine") {
		t.Fatalf("status: %v %s\n%s", err, stderr, out)
	}
	out, _, err = runMain(t, "--redis", url, "status", "--json", "--postgres", pg)
	var st struct{ Alerts *pgsink.AlertState }
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Alerts == nil || st.Alerts.Failing != 1 ||
		len(st.Alerts.PerRule) != 2 || st.Alerts.PerRule[1].Rule != "r" || st.Alerts.PerRule[1].Failing != 1 {
		t.Fatalf("status --json alerts: %v %+v\n%s", err, st.Alerts, out)
	}
}

// TestAlertAddRefusesWhereWrong: a --schedule that does not exist (or
// crawls another site), an empty --ids or --query (which would watch
// every item), a --drop-pct that is no percent and a bad webhook are
// refused naming the flag and what is wrong, the webhook's secret
// masked; --drop-pct takes "5%" as `results changes --min-drop` does.
func TestAlertAddRefusesWhereWrong(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	pg := testpg.DB(t)
	run := func(args ...string) (string, string, error) {
		return runMain(t, append(append([]string{"--redis", url, "alert", "add"}, args...), "--postgres", pg)...)
	}
	if _, stderr, err := runMain(t, "--redis", url, "schedule", "add", "phones", "--cron", "@hourly", "--", "avito", "search", "iphone"); err != nil {
		t.Fatalf("schedule add: %v %s", err, stderr)
	}
	hook := "https://hooks.example.test/bot42:" + masktest.WebhookToken + "/sendMessage?chat_id=7"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown schedule", []string{"--schedule", "phnoes", "--back-in-stock", "--webhook", hook}, "--schedule: no such schedule: phnoes"},
		{"schedule of another site", []string{"--schedule", "phones", "--back-in-stock", "--webhook", hook}, "--schedule phones: it crawls no ozon item"},
		{"empty ids", []string{"--ids", "", "--back-in-stock", "--webhook", hook}, `--ids "": no id in it`},
		{"commas for ids", []string{"--ids", " , ", "--back-in-stock", "--webhook", hook}, `--ids " , ": no id in it`},
		{"empty query", []string{"--query", "", "--back-in-stock", "--webhook", hook}, `--query "": no word in it`},
		{"blank query", []string{"--query", "  ", "--back-in-stock", "--webhook", hook}, `--query "  ": no word in it`},
		{"drop-pct not a number", []string{"--drop-pct", "5x", "--webhook", hook}, `--drop-pct "5x": want a number of percent`},
		{"drop-pct zero", []string{"--drop-pct", "0%", "--webhook", hook}, `--drop-pct "0%": want a percent in (0, 100)`},
		{"drop-pct too big", []string{"--drop-pct", "150%", "--webhook", hook}, "--drop-pct 150: want a percent in (0, 100)"},
		{"webhook scheme", []string{"--drop-pct", "5", "--webhook", "htps://hooks.example.test/bot42:" + masktest.WebhookToken + "/x"},
			`--webhook "htps://hooks.example.test/bot42:***/***": scheme "htps", want http or https`},
		{"webhook no scheme", []string{"--drop-pct", "5", "--webhook", "api.telegram.org/bot42:" + masktest.WebhookToken + "/sendMessage"},
			`--webhook "api.telegram.org/bot42:***/***": no scheme`},
		{"webhook space in host", []string{"--drop-pct", "5", "--webhook", "https://hooks example.test/bot42:" + masktest.WebhookToken + "/x"},
			`--webhook: not a URL: invalid character " " in host name`},
		{"webhook no host", []string{"--drop-pct", "5", "--webhook", "https:///bot42:" + masktest.WebhookToken + "/x"}, `no host after https://`},
		{"webhook spaces around", []string{"--drop-pct", "5", "--webhook", " " + hook}, "spaces around the URL"},
		{"webhook empty", []string{"--drop-pct", "5", "--webhook", ""}, "--webhook: required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := run(append([]string{"x", "--site", "ozon"}, c.args...)...)
			if err == nil || !strings.Contains(stderr, c.want) || strings.Contains(stderr, masktest.WebhookToken) {
				t.Errorf("%v: %v %q, want it to say %q (and no secret)", c.args, err, stderr, c.want)
			}
		})
	}
	out, stderr, err := run("fall", "--site", "ozon", "--drop-pct", "5%", "--webhook", hook)
	if err != nil || !strings.Contains(out, "drop ≥ 5%") {
		t.Fatalf("--drop-pct 5%%: %v %s %s", err, out, stderr)
	}
	out, stderr, err = run("phones", "--site", "avito", "--schedule", "phones", "--drop-pct", "12.5 %", "--webhook", hook)
	if err != nil || !strings.Contains(out, "avito items of schedule phones: drop ≥ 12.5%") {
		t.Fatalf("--schedule phones: %v %s %s", err, out, stderr)
	}
}
