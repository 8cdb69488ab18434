package testbed

import (
	"fmt"
	"net/netip"
)

// DefaultFirstIP is the farm's first proxy address; 127.0.0.1 is left to
// the sites.
const DefaultFirstIP = "127.0.0.2"

var loopback = netip.MustParsePrefix("127.0.0.0/8")

// loopbackIPs returns n consecutive loopback addresses from first, skipping
// addresses whose last octet is 0 or 255 (127.0.0.254 is followed by
// 127.0.1.1).
func loopbackIPs(first string, n int) ([]string, error) {
	if first == "" {
		first = DefaultFirstIP
	}
	a, err := netip.ParseAddr(first)
	if err != nil {
		return nil, fmt.Errorf("farm first ip %q: %w", first, err)
	}
	ips := make([]string, 0, n)
	for ; len(ips) < n; a = a.Next() {
		if !loopback.Contains(a) {
			return nil, fmt.Errorf("farm first ip %s: %d addresses run out of 127.0.0.0/8", first, n)
		}
		if b := a.As4(); b[3] == 0 || b[3] == 255 {
			continue
		}
		ips = append(ips, a.String())
	}
	return ips, nil
}

// isLoopback reports whether ip (text) is in 127.0.0.0/8 or ::1.
func isLoopback(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Unmap().IsLoopback()
}
