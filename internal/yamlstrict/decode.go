package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode decodes one YAML document of data into v, a pointer to a struct
// (or any type yaml.v3 decodes). Every key must be a field of the type
// at its place and every value of the field's kind; the first problem is
// an *Error with its line and place. Empty data leaves v as it is. v is
// changed only when the whole document is valid.
func Decode(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("yamlstrict: decode into %T: want a pointer", v)
	}
	root, err := parse(data)
	if root == nil || err != nil {
		return err
	}
	if err := check(root, t.Elem(), ""); err != nil {
		return err
	}
	if err := root.Decode(v); err != nil {
		return &Error{Msg: fmt.Sprintf("yaml: %v", err)} // check lets nothing through that fails here
	}
	return nil
}

// parse reads the one document of data (nil for none) and has yaml.v3
// refuse what check cannot walk: a key that is a mapping or a list, an
// anchor that contains itself, excessive aliasing.
func parse(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err, data)
	}
	if err := oneDocument(dec, data); err != nil {
		return nil, err
	}
	if k := complexKey(&root); k != nil {
		return nil, &Error{Line: k.Line, Msg: "yaml: a key must be a plain value, not a mapping or a list"}
	}
	var probe any
	var te *yaml.TypeError // a duplicate key: check names it with its place
	if err := root.Decode(&probe); err != nil && !errors.As(err, &te) {
		return nil, &Error{Msg: "yaml: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return &root, nil
}

// oneDocument refuses a second document after the first (data is the
// whole input, for the line of a syntax error).
func oneDocument(dec *yaml.Decoder, data []byte) error {
	var extra yaml.Node
	err := dec.Decode(&extra)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return syntaxError(err, data)
	}
	return &Error{Line: extra.Line, Msg: "one YAML document expected, found another"}
}

// plain says n is a scalar, or an alias of one.
func plain(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode
}

// complexKey finds a mapping key that is itself a mapping or a list (the
// tree as written: aliases are not followed).
func complexKey(n *yaml.Node) *yaml.Node {
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && !plain(c) {
			return c
		}
		if k := complexKey(c); k != nil {
			return k
		}
	}
	return nil
}

// Parse reads the one YAML document of data as a node tree, for a caller
// that walks the tree itself, with Decode's first checks: a syntax error
// on the line of the problem, one document, plain keys. An empty
// document is nil.
func Parse(data []byte) (*yaml.Node, error) {
	root, err := parse(data)
	if root == nil || err != nil {
		return nil, err
	}
	return resolve(root), nil
}
