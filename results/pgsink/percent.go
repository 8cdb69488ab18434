package pgsink

import (
	"errors"
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
