package detect

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"crawlq/internal/yamlstrict"
)

// ConfigError is a problem in a rules file, printed as
// "FILE:LINE: field: problem", or "FILE:LINE: problem" when the problem
// names its place itself (an unknown field: `unknown field "selector" in
// sites.avito.kinds.search (did you mean selectors?)`).
type ConfigError struct {
	File    string
	Line    int
	Field   string // dotted place: "sites.avito.kinds.search.selectors[1]"; "" when Problem names it
	Problem string
}

// Error formats the problem with its place.
func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Problem)
}

// LoadRules reads a YAML rules file and merges it over Builtin. Unknown
// fields, wrong types, bad regexps, selectors and JSON paths are errors
// naming the file, line and field.
func LoadRules(path string) (Rules, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Rules{}, err
	}
	user, err := ParseRules(path, b)
	if err != nil {
		return Rules{}, err
	}
	return Builtin().Merge(user), nil
}

// ParseRules decodes a YAML rules document; name is used in errors.
// The format (see builtin.yaml):
//
//	default: RULE
//	sites:
//	  SITE:
//	    default: RULE
//	    kinds: {KIND: RULE, ...}
//
// where RULE has the fields replace, block_status, rate_limit_status,
// defect_status, challenge_status, url_patterns, markers,
// challenge_markers, challenge_first_markers, title_markers, selectors,
// json_paths, empty_json_paths, empty_list_blocked, empty_list_not_found,
// unknown_json_suspect, page_size, min_size, drop_fraction,
// baseline_samples, confirm.
func ParseRules(name string, data []byte) (Rules, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Rules{}, syntaxError(name, err)
	}
	rs := Rules{Sites: map[string]Site{}}
	if len(root.Content) == 0 {
		return rs, nil
	}
	p := &parser{file: name}
	p.rules(root.Content[0], &rs)
	return rs, p.err
}

// yamlLine finds the line in a yaml.v3 syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a YAML syntax error into a ConfigError.
func syntaxError(name string, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &ConfigError{File: name, Line: 1, Field: "yaml", Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &ConfigError{File: name, Line: line, Field: "yaml", Problem: m[2]}
}

// parser walks the YAML tree; it keeps the first error.
type parser struct {
	file string
	err  error
}

// fail records a problem at node n.
func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	if p.err == nil {
		p.err = &ConfigError{File: p.file, Line: n.Line, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
}

// fields calls f for each key of mapping n, rejecting keys not in known.
func (p *parser) fields(n *yaml.Node, at string, known []string, f func(key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.fail(n, at, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && p.err == nil; i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case known != nil && !contains(known, k.Value):
			p.fail(k, "", "%s", yamlstrict.UnknownField(k.Value, at, known))
		case seen[k.Value]:
			p.fail(k, join(at, k.Value), "duplicate key")
		default:
			seen[k.Value] = true
			f(k.Value, v)
		}
	}
}

// rules decodes the top level.
func (p *parser) rules(n *yaml.Node, rs *Rules) {
	p.fields(n, "", []string{"default", "sites"}, func(key string, v *yaml.Node) {
		if key == "default" {
			rs.Default = p.rule(v, "default")
			return
		}
		p.fields(v, "sites", nil, func(name string, sv *yaml.Node) {
			rs.Sites[name] = p.site(sv, "sites."+name)
		})
	})
}

// site decodes one site.
func (p *parser) site(n *yaml.Node, at string) Site {
	s := Site{Kinds: map[string]Rule{}}
	p.fields(n, at, []string{"default", "kinds"}, func(key string, v *yaml.Node) {
		if key == "default" {
			s.Default = p.rule(v, at+".default")
			return
		}
		p.fields(v, at+".kinds", nil, func(kind string, kv *yaml.Node) {
			k := NormalizeKind(kind)
			s.Kinds[k] = s.Kinds[k].Merge(p.rule(kv, at+".kinds."+kind))
		})
	})
	return s
}

// ruleFields are the keys of a rule, in documentation order.
var ruleFields = []string{"replace", "block_status", "rate_limit_status", "defect_status", "challenge_status", "url_patterns", "markers", "challenge_markers", "challenge_first_markers",
	"title_markers", "selectors", "json_paths", "empty_json_paths", "empty_list_blocked", "empty_list_not_found", "unknown_json_suspect", "page_size", "min_size", "drop_fraction", "baseline_samples", "confirm"}

// rule decodes one rule.
func (p *parser) rule(n *yaml.Node, at string) Rule {
	var r Rule
	p.fields(n, at, ruleFields, func(key string, v *yaml.Node) {
		f := join(at, key)
		switch key {
		case "replace":
			scalarField(p, v, f, &r.Replace)
		case "empty_list_blocked":
			scalarField(p, v, f, &r.EmptyListBlocked)
		case "empty_list_not_found":
			scalarField(p, v, f, &r.EmptyListNotFound)
		case "unknown_json_suspect":
			scalarField(p, v, f, &r.UnknownJSONSuspect)
		case "block_status":
			p.statusList(v, f, &r.BlockStatus)
		case "rate_limit_status":
			p.statusList(v, f, &r.RateLimitStatus)
		case "defect_status":
			p.statusList(v, f, &r.DefectStatus)
		case "challenge_status":
			p.statusList(v, f, &r.ChallengeStatus)
		case "min_size":
			p.count(v, f, &r.MinSize)
		case "baseline_samples":
			p.count(v, f, &r.BaselineSamples)
		case "page_size":
			p.count(v, f, &r.PageSize)
		case "drop_fraction":
			p.fraction(v, f, &r.DropFraction)
		case "confirm":
			r.Confirm = p.confirm(v, f)
		default:
			p.stringList(v, f, r.stringField(key), stringChecks[key])
		}
	})
	return r
}

// stringField returns the string list field named key.
func (r *Rule) stringField(key string) *[]string {
	switch key {
	case "url_patterns":
		return &r.URLPatterns
	case "markers":
		return &r.Markers
	case "challenge_markers":
		return &r.ChallengeMarkers
	case "challenge_first_markers":
		return &r.ChallengeFirstMarkers
	case "title_markers":
		return &r.TitleMarkers
	case "selectors":
		return &r.Selectors
	case "empty_json_paths":
		return &r.EmptyJSONPaths
	}
	return &r.JSONPaths
}

// stringChecks validate the items of each string list field.
var stringChecks = map[string]func(string) error{
	"url_patterns": checkPattern, "markers": checkMarker, "challenge_markers": checkMarker, "challenge_first_markers": checkMarker, "title_markers": checkMarker,
	"selectors": checkSelector, "json_paths": checkJSONPath, "empty_json_paths": checkJSONPath,
}

// scalarField decodes a scalar into out.
func scalarField[T any](p *parser, n *yaml.Node, at string, out *T) {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, at, "want %s, got %s", typeName(*out), kindName(n))
		return
	}
	if err := n.Decode(out); err != nil {
		p.fail(n, at, "want %s, got %q", typeName(*out), n.Value)
	}
}

// typeName names a field's Go type for errors.
func typeName(v any) string {
	switch v.(type) {
	case bool:
		return "true or false"
	case int:
		return "an integer"
	case float64:
		return "a number"
	}
	return "a string"
}

// stringList decodes a list of strings, checking each.
func (p *parser) stringList(n *yaml.Node, at string, out *[]string, check func(string) error) {
	p.list(n, at, func(i int, item *yaml.Node) {
		var s string
		scalarField(p, item, fmt.Sprintf("%s[%d]", at, i), &s)
		if err := check(s); p.err == nil && err != nil {
			p.fail(item, fmt.Sprintf("%s[%d]", at, i), "%v", err)
		}
		*out = append(*out, s)
	})
}

// statusList decodes a list of HTTP status codes.
func (p *parser) statusList(n *yaml.Node, at string, out *[]int) {
	p.list(n, at, func(i int, item *yaml.Node) {
		var st int
		scalarField(p, item, fmt.Sprintf("%s[%d]", at, i), &st)
		if err := checkStatus(st); p.err == nil && err != nil {
			p.fail(item, fmt.Sprintf("%s[%d]", at, i), "%v", err)
		}
		*out = append(*out, st)
	})
}

// list calls f for each item of sequence n.
func (p *parser) list(n *yaml.Node, at string, f func(i int, item *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, at, "want a list, got %s", kindName(n))
		return
	}
	for i, item := range n.Content {
		f(i, item)
	}
}

// count decodes a non-negative integer.
func (p *parser) count(n *yaml.Node, at string, out *int) {
	scalarField(p, n, at, out)
	if p.err == nil && *out < 0 {
		p.fail(n, at, "%d is negative", *out)
	}
}

// confirm decodes a confirm count: 0 or 1.
func (p *parser) confirm(n *yaml.Node, at string) *int {
	var c int
	scalarField(p, n, at, &c)
	if p.err == nil && c != 0 && c != 1 {
		p.fail(n, at, "%d is not 0 or 1", c)
	}
	return &c
}

// fraction decodes a number in [0, 1).
func (p *parser) fraction(n *yaml.Node, at string, out *float64) {
	scalarField(p, n, at, out)
	if p.err == nil && (*out < 0 || *out >= 1) {
		p.fail(n, at, "%v is not in [0, 1)", *out)
	}
}

// kindName names a YAML node kind for errors.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias (anchors are not supported)"
	}
	return "nothing"
}

// join appends a key to a dotted place.
func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// contains reports whether s is in list.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
