package yamlstrict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
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

// syntaxError turns a yaml.v3 syntax error met reading data into an
// *Error on the line of the problem (problemLine).
func syntaxError(err error, data []byte) *Error {
	line, msg := splitError(err)
	return &Error{Line: max(line, problemLine(data, msg)), Msg: "yaml: " + msg}
}

// splitError splits a yaml.v3 syntax error into its line (0 when it names
// none, as on the first line) and its message.
func splitError(err error) (int, string) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(err.Error(), "yaml: ")
}

// problemLine is the line where reading data meets the syntax error msg:
// the last line of the shortest prefix of data whose reading fails with
// msg (0 when none does). yaml.v3 names the line where the block around
// the problem starts, counted from 0 for a parser's error: an item
// indented wrong on line 4 of a list begun on line 2 is "line 1". Once
// its line is in, every longer prefix fails the same way, so the search
// halves: O(log lines) reads, only for a document that is wrong.
func problemLine(data []byte, msg string) int {
	ends := lineEnds(data)
	k := sort.Search(len(ends), func(i int) bool {
		err := readAll(data[:ends[i]])
		if err == nil {
			return false
		}
		_, m := splitError(err)
		return m == msg
	})
	if k == len(ends) {
		return 0
	}
	return k + 1
}

// lineEnds is where each line of data ends, its newline included.
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	return ends
}

// readAll reads every document of data; the first error, or nil.
func readAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
