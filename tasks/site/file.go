package site

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadFile reads a saved page for offline parsing; a name ending in .gz is
// decompressed. Bodies over MaxBody are refused.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxBody {
		return nil, fmt.Errorf("%s: over the %d-byte limit", path, MaxBody)
	}
	return b, nil
}
