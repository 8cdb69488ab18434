package detect

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Response is what the fetcher got for one request.
type Response struct {
	// Status is the HTTP status of the last response (after redirects).
	Status int
	// FinalURL is the URL after redirects.
	FinalURL string
	Header   http.Header
	// Body is the (decompressed) body, possibly cut at the fetcher's cap.
	Body []byte
	// Truncated says Body was cut at the cap.
	Truncated bool
	// Err is the transport error, if the request failed.
	Err error
	// Page is the 1-based page number of a listing, used by the
	// empty-list rule. 0 means: read it from FinalURL's "page" or "p" query
	// parameter, else 1.
	Page int
}

// ReadSaved reads a saved page from path, gunzipping it when it starts
// with the gzip magic bytes (e.g. a .html.gz file).
func ReadSaved(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: gunzip: %w", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: gunzip: %w", path, err)
	}
	return out, nil
}

// SavedResponse builds a Response from a saved page for offline judging:
// the body from path (gunzipped if needed), the status, the final URL and
// headers given as "Name: value" lines.
func SavedResponse(path string, status int, finalURL string, headers []string) (*Response, error) {
	if status < 100 || status > 599 {
		return nil, fmt.Errorf("status %d is not an HTTP status", status)
	}
	h := http.Header{}
	for _, line := range headers {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("header %q: want \"Name: value\"", line)
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	body, err := ReadSaved(path)
	if err != nil {
		return nil, err
	}
	return &Response{Status: status, FinalURL: finalURL, Header: h, Body: body}, nil
}
