package proxies

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"crawlq/internal/yamlstrict"
)

// gatewayKeys are the keys of a proxy given as a mapping in a YAML list;
// every one but url is the line option of the same name.
var gatewayKeys = []string{"url", "sessions", "ttl", "idle", "exit", "rotating",
	"change", "change_method", "change_every", "change_settle", "change_timeout"}

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
// A bad item refuses the whole list with a *LineError naming its line.
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
		line, err := itemLine(it)
		if err != nil {
			return nil, &LineError{File: name, Line: it.Line, Reason: err.Error()}
		}
		ps, err := parseEntry(line)
		if err != nil {
			return nil, &LineError{File: name, Line: it.Line, Reason: err.Error()}
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

// yamlItems are the items of the document's proxies list.
func yamlItems(data []byte, name string) ([]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlstrict.WithFile(fmt.Errorf("%v", err), name)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &LineError{File: name, Line: root.Line, Reason: "want a mapping with the key proxies"}
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "proxies" {
			return nil, &LineError{File: name, Line: k.Line, Reason: yamlstrict.UnknownField(k.Value, "", []string{"proxies"})}
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, &LineError{File: name, Line: root.Line, Reason: "proxies: want a list"}
	}
	return list.Content, nil
}

// itemLine is a list item as a line of a proxy list: a string as it is,
// a mapping as its url and options.
func itemLine(it *yaml.Node) (string, error) {
	switch it.Kind {
	case yaml.ScalarNode:
		if strings.TrimSpace(it.Value) == "" {
			return "", errors.New("empty proxy")
		}
		return it.Value, nil
	case yaml.MappingNode:
		return mappingLine(it)
	}
	return "", errors.New("want a proxy line or a mapping with url")
}

// mappingLine turns {url: U, sessions: N, …} into "U sessions=N …".
func mappingLine(it *yaml.Node) (string, error) {
	var url string
	var opts []string
	for i := 0; i+1 < len(it.Content); i += 2 {
		k, v := it.Content[i], it.Content[i+1]
		switch {
		case k.Value == "url":
			url = v.Value
		case k.Value == "rotating" && v.Value == "true":
			opts = append(opts, "rotating")
		case k.Value == "rotating" && v.Value == "false":
		case k.Value == "rotating":
			return "", fmt.Errorf("rotating: want true or false, got %q", v.Value)
		case v.Kind != yaml.ScalarNode || strings.ContainsAny(v.Value, " \t"):
			return "", fmt.Errorf("%s: want a single value", k.Value)
		default:
			if !containsKey(k.Value) {
				return "", errors.New(yamlstrict.UnknownField(k.Value, "a proxy", gatewayKeys))
			}
			opts = append(opts, k.Value+"="+v.Value)
		}
	}
	if strings.TrimSpace(url) == "" || strings.ContainsAny(url, " \t") {
		return "", errors.New("url: want the proxy's URL")
	}
	return strings.Join(append([]string{url}, opts...), " "), nil
}

func containsKey(k string) bool {
	for _, g := range gatewayKeys {
		if g == k {
			return true
		}
	}
	return false
}
