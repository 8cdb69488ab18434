package detect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// jsonPath is a parsed dotted path: "data.products[].id", or
// "widgetStates.tileGridDesktop-*.@fromstr.items" (see parseJSONPath).
type jsonPath struct {
	src  string
	segs []segment
}

// segment is one step: an object key (may be empty at the root), or
// every member whose name starts with key (prefix), or the JSON document
// that the string found here holds (fromStr); then, if each is set,
// every element of the array found there.
type segment struct {
	key     string
	prefix  bool
	fromStr bool
	each    bool
}

// fromStrSegment is the segment that decodes a JSON string and goes on
// in the document it holds (GJSON's modifier of the same name).
const fromStrSegment = "@fromstr"

// found is the outcome of looking a path up.
type found uint8

const (
	missing   found = iota // the path is absent or null
	emptyList              // the path ends in (or walks) an empty array
	present                // the path is there with a value
)

// parseJSONPath parses a dotted path. A segment is a key; "key*" is
// every member whose name starts with "key" ("*" alone: every member);
// "@fromstr" takes the string found so far as a JSON document and goes
// on inside it (Ozon's widgetStates map widget names to JSON strings);
// a "[]" suffix walks every element of an array. A path may start with
// "[]" for a root array. Keys may not contain '.', '[', ']' or '*'.
func parseJSONPath(p string) (jsonPath, error) {
	jp := jsonPath{src: p}
	if p == "" {
		return jp, fmt.Errorf("empty json path")
	}
	for i, part := range strings.Split(p, ".") {
		s, err := parseSegment(part, i == 0)
		if err != nil {
			return jp, fmt.Errorf("invalid json path %q: %w", p, err)
		}
		jp.segs = append(jp.segs, s)
	}
	return jp, nil
}

// parseSegment parses one dotted part; first says it starts the path.
func parseSegment(part string, first bool) (segment, error) {
	var s segment
	s.key, s.each = strings.CutSuffix(part, "[]")
	if s.key == fromStrSegment {
		s.key, s.fromStr = "", true
		return s, nil
	}
	s.key, s.prefix = strings.CutSuffix(s.key, "*")
	switch {
	case strings.ContainsAny(s.key, "[]*"):
		return s, fmt.Errorf("bad segment %q", part)
	case s.key == "" && !s.prefix && !(s.each && first):
		return s, fmt.Errorf("bad segment %q", part)
	}
	return s, nil
}

// lookup finds jp in the JSON document doc without decoding it (a string
// that @fromstr reads is decoded). A malformed or cut document yields
// missing for what it cannot reach.
func (jp jsonPath) lookup(doc []byte) found {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	i := skipWS(doc, 0)
	return walk(doc, i, jp.segs)
}

// walk follows segs from the value starting at doc[i].
func walk(doc []byte, i int, segs []segment) found {
	if len(segs) == 0 {
		return leaf(doc, i)
	}
	s, rest := segs[0], segs[1:]
	switch {
	case s.fromStr:
		inner, ok := unquote(doc, i)
		if !ok {
			return missing
		}
		return step(inner, skipWS(inner, 0), s, rest)
	case s.prefix:
		return eachMember(doc, i, s.key, func(v int) found { return step(doc, v, s, rest) })
	case s.key != "":
		v, ok := member(doc, i, s.key)
		if !ok {
			return missing
		}
		i = v
	}
	return step(doc, i, s, rest)
}

// step goes on from the value at doc[i] that segment s found: into every
// element when s walks an array, else on with rest.
func step(doc []byte, i int, s segment, rest []segment) found {
	if s.each {
		return walkEach(doc, i, rest)
	}
	return walk(doc, i, rest)
}

// walkEach follows segs from every element of the array at doc[i]; the
// best outcome wins.
func walkEach(doc []byte, i int, segs []segment) found {
	if i >= len(doc) || doc[i] != '[' {
		return missing
	}
	best := emptyList
	i = skipWS(doc, i+1)
	for i < len(doc) && doc[i] != ']' {
		if r := walk(doc, i, segs); r == present {
			return present
		} else if r == missing {
			best = missing
		}
		var ok bool
		if i, ok = next(doc, i, ']'); !ok {
			return missing
		}
	}
	return best
}

// eachMember calls f with the value of every member of the object at
// doc[i] whose name starts with prefix, and returns the best outcome:
// present over an empty list over missing (no such member: missing).
func eachMember(doc []byte, i int, prefix string, f func(int) found) found {
	best := missing
	if i >= len(doc) || doc[i] != '{' {
		return best
	}
	i = skipWS(doc, i+1)
	for i < len(doc) && doc[i] == '"' {
		end, ok := skipString(doc, i)
		if !ok {
			return best
		}
		name := doc[i+1 : end-1]
		i = skipWS(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return best
		}
		i = skipWS(doc, i+1)
		if bytes.HasPrefix(name, []byte(prefix)) {
			best = max(best, f(i))
			if best == present {
				return best
			}
		}
		if i, ok = next(doc, i, '}'); !ok {
			return best
		}
	}
	return best
}

// unquote decodes the JSON string at doc[i]; ok is false when there is
// none or it is cut.
func unquote(doc []byte, i int) ([]byte, bool) {
	if i >= len(doc) || doc[i] != '"' {
		return nil, false
	}
	end, ok := skipString(doc, i)
	if !ok {
		return nil, false
	}
	var s string
	if json.Unmarshal(doc[i:end], &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// leaf classifies the value at doc[i].
func leaf(doc []byte, i int) found {
	switch {
	case i >= len(doc) || bytes.HasPrefix(doc[i:], []byte("null")):
		return missing
	case doc[i] == '[' && skipWS(doc, i+1) < len(doc) && doc[skipWS(doc, i+1)] == ']':
		return emptyList
	}
	return present
}

// member finds key in the object at doc[i] and returns its value's start.
func member(doc []byte, i int, key string) (int, bool) {
	if i >= len(doc) || doc[i] != '{' {
		return 0, false
	}
	i = skipWS(doc, i+1)
	for i < len(doc) && doc[i] == '"' {
		end, ok := skipString(doc, i)
		if !ok {
			return 0, false
		}
		name := doc[i+1 : end-1]
		i = skipWS(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return 0, false
		}
		i = skipWS(doc, i+1)
		if string(name) == key {
			return i, true
		}
		if i, ok = next(doc, i, '}'); !ok {
			return 0, false
		}
	}
	return 0, false
}

// next skips the value at doc[i] and the comma after it; it returns the
// start of the next item, or the index of closer if the container ends.
func next(doc []byte, i int, closer byte) (int, bool) {
	i, ok := skipValue(doc, i)
	if !ok {
		return 0, false
	}
	i = skipWS(doc, i)
	switch {
	case i < len(doc) && doc[i] == ',':
		return skipWS(doc, i+1), true
	case i < len(doc) && doc[i] == closer:
		return i, true
	}
	return 0, false
}

// skipValue returns the index just past the value at doc[i].
func skipValue(doc []byte, i int) (int, bool) {
	if i >= len(doc) {
		return 0, false
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		return skipContainer(doc, i)
	}
	for i < len(doc) && !endsScalar(doc[i]) {
		i++
	}
	return i, true
}

// endsScalar tells whether c ends a number or literal.
func endsScalar(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// skipContainer returns the index just past the object or array at doc[i],
// counting brackets outside strings.
func skipContainer(doc []byte, i int) (int, bool) {
	depth := 0
	for i < len(doc) {
		switch doc[i] {
		case '"':
			end, ok := skipString(doc, i)
			if !ok {
				return 0, false
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}

// skipString returns the index just past the string starting at doc[i].
func skipString(doc []byte, i int) (int, bool) {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipWS returns the index of the first non-space byte at or after i.
func skipWS(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\n' || doc[i] == '\r' || doc[i] == '\t') {
		i++
	}
	return i
}

// isJSON tells whether body looks like a JSON document (after an optional
// UTF-8 BOM and spaces it starts with '{' or '[').
func isJSON(body []byte) bool {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	i := skipWS(body, 0)
	return i < len(body) && (body[i] == '{' || body[i] == '[')
}
