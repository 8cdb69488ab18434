package pgsink

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// percentRE is a plain decimal number: no exponent, hex, Inf or NaN.
var percentRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)$`)

// ParsePercent reads a percent as users type it: "10", "10%", "10 %" or
// "12.5%". It checks no range; the caller names its flag and bounds.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if !percentRE.MatchString(t) {
		return 0, errors.New("want a number of percent, e.g. 10 or 10%")
	}
	return strconv.ParseFloat(t, 64)
}

// ChangePct is a price's change from → to in percent of from, rounded to
// two decimals, negative for a fall (1000 → 850 is -15): the one
// convention of `results changes`, the dashboard and the alerts'
// change_pct. 0 when from is 0 (no price to compare with).
func ChangePct(from, to int64) float64 {
	if from == 0 {
		return 0
	}
	return math.Round(10000*float64(to-from)/float64(from)) / 100
}

// FormatChange prints a change in percent for people: always signed
// ("+6.8%", "−15%" with a minus sign U+2212, "0%"), two decimals at most.
func FormatChange(pct float64) string {
	r := math.Round(pct*100) / 100
	s := strconv.FormatFloat(math.Abs(r), 'f', -1, 64) + "%"
	switch {
	case r < 0:
		return "−" + s
	case r > 0:
		return "+" + s
	}
	return s
}
