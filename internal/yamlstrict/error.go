package yamlstrict

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Error is one problem at one place of a YAML document.
type Error struct {
	// File names the document; empty when the caller gave none (WithFile).
	File string
	// Line is 1-based; 0 when unknown.
	Line int
	// Path is the dotted place of the problem ("sites.avito.base_ulr"),
	// empty for the document as a whole.
	Path string
	// Msg says what is wrong, naming the place.
	Msg string
}

// Error formats the problem as "FILE:LINE: msg" (or "line LINE: msg"
// without a file).
func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// WithFile names file in err: an *Error gets it as its File, anything
// else is wrapped as "file: err".
func WithFile(err error, file string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.File = file
		return &c
	}
	return fmt.Errorf("%s: %w", file, err)
}

// yamlLine finds the line in a yaml.v3 syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a yaml.v3 syntax error into an *Error.
func syntaxError(err error) *Error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{Msg: "yaml: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &Error{Line: line, Msg: "yaml: " + m[2]}
}
