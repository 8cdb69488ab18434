package proxies

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"crawlq/internal/yamlstrict"
)

// ParseYAML reads a proxy list written as YAML: a document with one key,
// proxies, a list whose items are lines of a proxy list (a string) or a
// gateway as a mapping:
//
//	proxies:
//	  - http://user:pass@10.0.0.1:8080
//	  - url: http://brd-customer-C-zone-Z-session-{session}:PASS@gw.example:22225
//	    sessions: 200
//	    ttl: 10m
//	    idle: 60s
//	    exit: header:x-luminati-ip
//
// A bad item refuses the whole list with a *LineError naming the line
// at fault: a mapping's option on its own line.
func ParseYAML(r io.Reader, name string) ([]Proxy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	items, err := yamlItems(data, name)
	if err != nil {
		return nil, err
	}
	var out []Proxy
	seen := map[string]bool{}
	for _, it := range items {
		e, err := itemEntry(it)
		if err != nil {
			return nil, yamlLineError(err, name, it.Line)
		}
		ps, err := parseEntry(e, name)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !seen[p.ID] {
				seen[p.ID] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// yamlLineError is err as a *LineError of file: on its own line if it
// has one, else on line.
func yamlLineError(err error, file string, line int) error {
	var le *LineError
	if errors.As(err, &le) {
		le.File = file
		return le
	}
	return &LineError{File: file, Line: line, Reason: err.Error()}
}

// yamlItems are the items of the document's proxies list.
func yamlItems(data []byte, name string) ([]*yaml.Node, error) {
	root, err := yamlstrict.Parse(data)
	if err != nil {
		return nil, yamlstrict.WithFile(err, name)
	}
	if root == nil {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &LineError{File: name, Line: root.Line, Reason: "want a mapping with the key proxies"}
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "proxies" {
			return nil, &LineError{File: name, Line: k.Line, Reason: yamlstrict.UnknownField(k.Value, "", []string{"proxies"})}
		}
		if list != nil {
			return nil, &LineError{File: name, Line: k.Line, Reason: "proxies: duplicate key"}
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, &LineError{File: name, Line: root.Line, Reason: "proxies: want a list"}
	}
	return list.Content, nil
}

// itemEntry is a list item as an entry: a string as a line of a proxy
// list, a mapping as its url and options, each on its key's line.
func itemEntry(it *yaml.Node) (listEntry, error) {
	switch it.Kind {
	case yaml.ScalarNode:
		if strings.TrimSpace(it.Value) == "" {
			return listEntry{}, errors.New("empty proxy")
		}
		return lineEntry(it.Value, it.Line), nil
	case yaml.MappingNode:
		return mappingEntry(it)
	}
	return listEntry{}, errors.New("want a proxy line or a mapping with url")
}

// mappingEntry turns {url: U, sessions: N, …} into U and its options
// sessions=N, …; an error about one key is a *LineError on its line.
func mappingEntry(it *yaml.Node) (listEntry, error) {
	e := listEntry{line: it.Line}
	first := map[string]int{}
	for i := 0; i+1 < len(it.Content); i += 2 {
		k, v := it.Content[i], it.Content[i+1]
		if line, twice := first[k.Value]; twice {
			return e, optionError(k.Line, "%s: duplicate key (first at line %d)", k.Value, line)
		}
		first[k.Value] = k.Line
		switch {
		case k.Value == "url":
			e.proxy, e.line = v.Value, k.Line
		case k.Value == "rotating" && v.Value == "true":
			e.opts = append(e.opts, lineOption{text: "rotating", line: k.Line})
		case k.Value == "rotating" && v.Value == "false":
		case k.Value == "rotating":
			return e, optionError(k.Line, "rotating: want true or false, got %q", v.Value)
		case !slices.Contains(optionKeys, k.Value):
			return e, optionError(k.Line, "%s", yamlstrict.UnknownField(k.Value, "a proxy", append([]string{"url"}, optionKeys...)))
		case v.Kind != yaml.ScalarNode || v.Value == "" || strings.ContainsAny(v.Value, " \t"):
			return e, optionError(k.Line, "%s: want a single value", k.Value)
		default:
			e.opts = append(e.opts, lineOption{text: k.Value + "=" + v.Value, line: k.Line})
		}
	}
	if strings.TrimSpace(e.proxy) == "" || strings.ContainsAny(e.proxy, " \t") {
		return e, errors.New("url: want the proxy's URL")
	}
	return e, nil
}
