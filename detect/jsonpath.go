package detect

import (
	"bytes"
	"fmt"
	"strings"
)

// jsonPath is a parsed dotted path: "data.products[].id".
type jsonPath struct {
	src  string
	segs []segment
}

// segment is one step: an object key (may be empty at the root), then,
// if each is set, every element of the array found there.
type segment struct {
	key  string
	each bool
}

// found is the outcome of looking a path up.
type found uint8

const (
	missing   found = iota // the path is absent or null
	emptyList              // the path ends in (or walks) an empty array
	present                // the path is there with a value
)

// parseJSONPath parses "a.b[].c"; a path may start with "[]" for a root
// array. Keys may not contain '.', '[' or ']'.
func parseJSONPath(p string) (jsonPath, error) {
	jp := jsonPath{src: p}
	if p == "" {
		return jp, fmt.Errorf("empty json path")
	}
	for i, part := range strings.Split(p, ".") {
		key, each := strings.CutSuffix(part, "[]")
		if strings.ContainsAny(key, "[]") || (key == "" && !(each && i == 0)) {
			return jp, fmt.Errorf("invalid json path %q: bad segment %q", p, part)
		}
		jp.segs = append(jp.segs, segment{key: key, each: each})
	}
	return jp, nil
}

// lookup finds jp in the JSON document doc without decoding it.
// A malformed or cut document yields missing for what it cannot reach.
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
	s := segs[0]
	if s.key != "" {
		var ok bool
		if i, ok = member(doc, i, s.key); !ok {
			return missing
		}
	}
	if !s.each {
		return walk(doc, i, segs[1:])
	}
	return walkEach(doc, i, segs[1:])
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
