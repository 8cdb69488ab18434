package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommandStats(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    map[string]int64
		wantErr bool
	}{
		{name: "redis 7 lines", info: "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n" +
			"cmdstat_config|resetstat:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0\r\n",
			want: map[string]int64{"evalsha": 12, "config|resetstat": 1}},
		{name: "empty", info: "# Commandstats\r\n", want: map[string]int64{}},
		{name: "no calls field", info: "cmdstat_get:usec=1\r\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommandStats(tt.info)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %t", err, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, got); !tt.wantErr && d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
		})
	}
}

// TestIdleFiguresLeaveOutTheBench: the bench's own CONFIG RESETSTAT and
// INFO are not the workers' cost.
func TestIdleFiguresLeaveOutTheBench(t *testing.T) {
	calls := map[string]int64{"evalsha": 60, "rpoplpush": 40, "info": 1, "config|resetstat": 1}
	got := idleFigures(calls, 10, 2)
	want := IdleRun{Workers: 2, Commands: 100, PerS: 10, PerWorkerS: 5,
		Top: []CommandRate{{Command: "evalsha", PerS: 6}, {Command: "rpoplpush", PerS: 4}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
}
