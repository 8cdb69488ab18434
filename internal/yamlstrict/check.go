package yamlstrict

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
	timeType        = reflect.TypeFor[time.Time]()
)

// check walks n against t, the Go type it is to be decoded into, the way
// yaml.v3 maps keys to fields (the yaml tag's name, else the lower-cased
// field name; ",inline" structs and maps), and returns the first unknown
// key, duplicate key or value of the wrong kind, at the dotted place at,
// as an *Error. It follows aliases: n must hold no anchor that contains
// itself (Decode has yaml.v3 refuse those first).
func check(n *yaml.Node, t reflect.Type, at string) error {
	n = resolve(n)
	if n == nil || n.Tag == "!!null" {
		return nil
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return leaf(n, t, at)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(n, t.Elem(), at)
	case reflect.Interface:
		return nil
	case reflect.Struct:
		if t == timeType {
			return leaf(n, t, at)
		}
		return checkStruct(n, fieldsOf(t), t, at)
	case reflect.Map:
		return checkMap(n, t, at)
	case reflect.Slice, reflect.Array:
		return checkSeq(n, t, at)
	}
	return leaf(n, t, at)
}

// resolve follows documents and aliases to the node that holds the value.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// checkStruct checks a mapping against the fields of a struct.
func checkStruct(n *yaml.Node, fs fields, t reflect.Type, at string) error {
	if n.Kind != yaml.MappingNode {
		return mismatch(n, t, at)
	}
	return eachKey(n, at, func(k, v *yaml.Node) error {
		if k.Tag == "!!merge" {
			return checkMerge(v, t, at)
		}
		ft, ok := fs.byName[k.Value]
		switch {
		case ok:
			return check(v, ft, join(at, k.Value))
		case fs.rest != nil:
			return check(v, fs.rest.Elem(), join(at, k.Value))
		}
		return &Error{Line: k.Line, Path: join(at, k.Value), Msg: UnknownField(k.Value, at, fs.names)}
	})
}

// checkMerge checks the mappings a merge key (<<) brings in.
func checkMerge(v *yaml.Node, t reflect.Type, at string) error {
	v = resolve(v)
	if v != nil && v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			if err := check(m, t, at); err != nil {
				return err
			}
		}
		return nil
	}
	return check(v, t, at)
}

// checkMap checks a mapping's keys and values against a map type.
func checkMap(n *yaml.Node, t reflect.Type, at string) error {
	if n.Kind != yaml.MappingNode {
		return mismatch(n, t, at)
	}
	return eachKey(n, at, func(k, v *yaml.Node) error {
		if k.Tag == "!!merge" {
			return checkMerge(v, t, at)
		}
		if err := leaf(k, t.Key(), join(at, k.Value)); err != nil {
			return err
		}
		return check(v, t.Elem(), join(at, k.Value))
	})
}

// eachKey calls f for every key and value of mapping n, refusing a key
// given twice.
func eachKey(n *yaml.Node, at string, f func(k, v *yaml.Node) error) error {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			continue
		}
		if line, dup := first[k.Value]; dup && k.Tag != "!!merge" {
			return &Error{Line: k.Line, Path: join(at, k.Value),
				Msg: fmt.Sprintf("%s: duplicate key (first at line %d)", join(at, k.Value), line)}
		}
		first[k.Value] = k.Line
		if err := f(k, v); err != nil {
			return err
		}
	}
	return nil
}

// checkSeq checks every item of a list.
func checkSeq(n *yaml.Node, t reflect.Type, at string) error {
	if n.Kind != yaml.SequenceNode {
		return mismatch(n, t, at)
	}
	if t.Kind() == reflect.Array && len(n.Content) > t.Len() {
		return &Error{Line: n.Line, Path: at, Msg: fmt.Sprintf("%s: want at most %d items, got %d", at, t.Len(), len(n.Content))}
	}
	for i, item := range n.Content {
		if err := check(item, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
			return err
		}
	}
	return nil
}

// leaf decodes a value into a fresh t, so a value yaml.v3 would refuse is
// refused here with its place.
func leaf(n *yaml.Node, t reflect.Type, at string) error {
	custom := t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
	if n.Kind != yaml.ScalarNode && !custom {
		return mismatch(n, t, at)
	}
	err := n.Decode(reflect.New(t).Interface())
	var te *yaml.TypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) || !custom:
		return mismatch(n, t, at)
	}
	return &Error{Line: n.Line, Path: at, Msg: fmt.Sprintf("%s: %v", place(at), err)}
}

// mismatch says what kind of value the place wants and what it got.
func mismatch(n *yaml.Node, t reflect.Type, at string) error {
	return &Error{Line: n.Line, Path: at, Msg: fmt.Sprintf("%s: want %s, got %s", place(at), want(t), got(n))}
}

// place names the top level too.
func place(at string) string {
	if at == "" {
		return "the document"
	}
	return at
}

// want describes a Go type in YAML's words.
func want(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration such as 500ms"
	case t == timeType:
		return "a time such as 2026-01-02T15:04:05Z"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return want(t.Elem())
	}
	return "another kind of value"
}

// got describes a YAML node: a scalar by its text, else its kind.
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// fields are the YAML keys of a struct: each field's type, the names in
// declaration order, and the element type of an inline map (rest), which
// takes every other key.
type fields struct {
	byName map[string]reflect.Type
	names  []string
	rest   reflect.Type
}

func fieldsOf(t reflect.Type) fields {
	fs := fields{byName: map[string]reflect.Type{}}
	fs.add(t)
	return fs
}

// add adds t's fields, descending into ",inline" structs.
func (fs *fields) add(t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if inline(opts) {
			fs.addInline(f.Type)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs.byName[name] = f.Type
		fs.names = append(fs.names, name)
	}
}

func (fs *fields) addInline(t reflect.Type) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		fs.rest = t
		return
	}
	fs.add(t)
}

func inline(opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == "inline" {
			return true
		}
	}
	return false
}
