package yamlstrict

import (
	"fmt"
	"strings"
)

// UnknownField is the message for key, found in the mapping at (a dotted
// place, "" for the top level) where only known are allowed:
//
//	unknown field "base_ulr" in sites.avito (did you mean base_url?)
//
// or, with no close match, the known fields instead of a guess.
func UnknownField(key, at string, known []string) string {
	where := "at the top level"
	if at != "" {
		where = "in " + at
	}
	if s := Suggest(key, known); s != "" {
		return fmt.Sprintf("unknown field %q %s (did you mean %s?)", key, where, s)
	}
	return fmt.Sprintf("unknown field %q %s (want one of %s)", key, where, strings.Join(known, ", "))
}

// Suggest returns the word of known closest to word (case aside, a
// transposition counting as one edit), when it is within a third of
// word's length (at least one edit); "" when none is that close. Of
// equally close words the first in known wins.
func Suggest(word string, known []string) string {
	w := strings.ToLower(word)
	best, bestD := "", max(1, len([]rune(w))/3)+1
	for _, k := range known {
		if d := distance(w, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and transpositions of adjacent
// runes that make a into b.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
