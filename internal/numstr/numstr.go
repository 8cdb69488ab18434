// Package numstr reads the integers Redis keeps as strings: hash fields,
// counters and the parts of a stored value.
package numstr

import "strconv"

// Int64 is s as a base-10 int64; 0 when s is empty (a missing field) or
// not a number.
func Int64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
