package truth

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/proxies"
	"crawlq/testbed"
)

func TestScore(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	entry := func(ip string, at time.Duration, v testbed.Verdict, m testbed.Meaning) testbed.Entry {
		return testbed.Entry{Site: "wildberries", IP: ip, Path: "/search?q=x", Start: t0.Add(at), Verdict: v, Meant: m}
	}
	banned := func(ip string, n int64, at time.Duration) proxies.ProxyStats {
		return proxies.ProxyStats{Masked: "http://u:***@" + ip + ":8000",
			Sites: map[string]proxies.ProxySiteStats{"wildberries": {Banned: n, LastBanAt: t0.Add(at)}}}
	}
	tests := []struct {
		name    string
		entries []testbed.Entry
		pool    []proxies.ProxyStats
		want    Report
	}{
		{name: "soft ban contradicted by a second IP",
			entries: []testbed.Entry{entry("127.0.0.2", 0, testbed.VerdictSoftBanned, testbed.MeantBanned),
				entry("127.0.0.5", 10*time.Millisecond, testbed.VerdictOK, testbed.MeantItems)},
			pool: []proxies.ProxyStats{banned("127.0.0.2", 1, 20*time.Millisecond)},
			want: Report{SoftBannedAnswers: 1}},
		{name: "soft ban taken as a result",
			entries: []testbed.Entry{entry("127.0.0.2", 0, testbed.VerdictSoftBanned, testbed.MeantBanned)},
			want:    Report{SoftBannedAnswers: 1, MissedSoftBans: 1}},
		{name: "soft ban abandoned, then asked again with items",
			entries: []testbed.Entry{entry("127.0.0.2", 0, testbed.VerdictSoftBanned, testbed.MeantBanned),
				entry("127.0.0.5", time.Second, testbed.VerdictOK, testbed.MeantItems)},
			want: Report{SoftBannedAnswers: 1}},
		{name: "two soft bans agreeing are both missed",
			entries: []testbed.Entry{entry("127.0.0.2", 0, testbed.VerdictSoftBanned, testbed.MeantBanned),
				entry("127.0.0.5", time.Millisecond, testbed.VerdictSoftBanned, testbed.MeantBanned)},
			want: Report{SoftBannedAnswers: 2, MissedSoftBans: 2}},
		{name: "quarantined later for another answer, this one is still missed",
			entries: []testbed.Entry{entry("127.0.0.2", 0, testbed.VerdictSoftBanned, testbed.MeantBanned)},
			pool:    []proxies.ProxyStats{banned("127.0.0.2", 1, time.Minute)},
			want:    Report{SoftBannedAnswers: 1, MissedSoftBans: 1}},
		{name: "empty answer punished",
			entries: []testbed.Entry{entry("127.0.0.3", 0, testbed.VerdictOK, testbed.MeantEmpty)},
			pool:    []proxies.ProxyStats{banned("127.0.0.3", 2, 0)},
			want:    Report{NoResultAnswers: 1, FalseQuarantines: 2}},
		{name: "hard ban quarantined",
			entries: []testbed.Entry{entry("127.0.0.4", 0, testbed.VerdictTooFast, "")},
			pool:    []proxies.ProxyStats{banned("127.0.0.4", 1, 0)},
			want:    Report{}},
		{name: "a modem's ban on its exit IP is not judged on its host",
			entries: []testbed.Entry{entry("127.0.6.9", 0, testbed.VerdictVolume, "")},
			pool:    []proxies.ProxyStats{banned("127.0.5.1", 1, 0)},
			want:    Report{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(tc.entries, &proxies.PoolStats{Proxies: tc.pool})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Score (-want +got):\n%s", diff)
			}
		})
	}
}
