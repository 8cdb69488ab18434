package mask

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Text is s (an error, a log message, a provider's answer) with what may
// be a secret hidden: each known secret (a password, a key, a whole URL;
// also as URL-escaped) and every URL in it by the rule of URL, every
// user:pass@ and every password=… (secret=, token=).
func Text(s string, known ...string) string {
	known = slices.Clone(known)
	slices.SortFunc(known, func(a, b string) int { return len(b) - len(a) })
	for _, k := range known {
		s = replaceKnown(s, k)
	}
	s = urlInText.ReplaceAllStringFunc(s, URL)
	s = credentials.ReplaceAllString(s, "$1:"+stars+"@")
	return secretValue.ReplaceAllString(s, "$1="+stars)
}

// replaceKnown hides k in s: a URL by the rule of URL, anything else
// whole, as written and URL-escaped.
func replaceKnown(s, k string) string {
	if k == "" {
		return s
	}
	if strings.Contains(k, "://") {
		return strings.ReplaceAll(s, k, URL(k))
	}
	for _, v := range []string{k, url.QueryEscape(k), url.PathEscape(k)} {
		s = strings.ReplaceAll(s, v, stars)
	}
	return s
}

var (
	// urlInText is a URL in free text: it ends before a space, a quote or
	// the punctuation that ends a sentence or clause.
	urlInText = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'<>`]*[^\\s\"'<>`.,;:)\\]]")
	// credentials is user:pass@ outside a URL.
	credentials = regexp.MustCompile(`([A-Za-z0-9._~%!$&'()*+,;=-]+):[^@\s/]+@`)
)

// Err is err with its message masked by Text (nil stays nil, an error with
// nothing to hide is returned as is); errors.Is and errors.As still see
// through it.
func Err(err error, known ...string) error {
	if err == nil {
		return nil
	}
	msg := Text(err.Error(), known...)
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

// maskedError prints a masked message and unwraps to the original.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
