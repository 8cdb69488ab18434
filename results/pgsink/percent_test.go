package pgsink

import "testing"

// TestChangePct: a change is in percent of the old price, negative for a
// fall, rounded to two decimals.
func TestChangePct(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to int64
		want     float64
	}{
		{"fall", 1000, 850, -15},
		{"rise", 100000, 106800, 6.8},
		{"doubled and more", 50000, 101800, 103.6},
		{"a third", 300, 200, -33.33},
		{"two thirds up", 300, 500, 66.67},
		{"unchanged", 700, 700, 0},
		{"no old price", 0, 700, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChangePct(tc.from, tc.to); got != tc.want {
				t.Errorf("ChangePct(%d, %d) = %v, want %v", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

// TestFormatChange: always signed, a minus sign for a fall, two decimals
// at most.
func TestFormatChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		pct  float64
		want string
	}{
		{"rise", 6.8, "+6.8%"},
		{"fall", -15, "−15%"},
		{"two decimals", -33.333333333333336, "−33.33%"},
		{"zero", 0, "0%"},
		{"rounds to zero", -0.001, "0%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatChange(tc.pct); got != tc.want {
				t.Errorf("FormatChange(%v) = %q, want %q", tc.pct, got, tc.want)
			}
		})
	}
}
