package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return syntaxError(err)
	}
	if err := oneDocument(dec); err != nil {
		return err
	}
	if err := Check(&root, t.Elem()); err != nil {
		return err
	}
	if err := root.Decode(v); err != nil {
		return &Error{Msg: fmt.Sprintf("yaml: %v", err)} // Check lets nothing through that fails here
	}
	return nil
}

// oneDocument refuses a second document after the first.
func oneDocument(dec *yaml.Decoder) error {
	var extra yaml.Node
	err := dec.Decode(&extra)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return syntaxError(err)
	}
	return &Error{Line: extra.Line, Msg: "one YAML document expected, found another"}
}
