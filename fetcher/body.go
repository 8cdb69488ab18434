package fetcher

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// AcceptEncoding is what Do advertises unless the request sets its own:
// the browsers' BrowserAcceptEncoding, zstd included (Do decodes it).
const AcceptEncoding = BrowserAcceptEncoding

// zstdMaxWindow is the largest zstd window decoded: 8 MiB, the limit
// RFC 8878 sets for HTTP and browsers keep.
const zstdMaxWindow = 8 << 20

// initialBuffer is the first buffer size when the body length is unknown.
const initialBuffer = 32 << 10

// body is a response body read under the cap.
type body struct {
	data      []byte
	read      int64 // decoded bytes read: at most cap+1
	truncated bool
	decoded   bool // a Content-Encoding was undone
}

// readBody decodes r's body and reads at most limit+1 decoded bytes, so a
// huge body or a decompression bomb stops at the cap.
func readBody(r *http.Response, limit int64) (body, error) {
	codings := contentCodings(r.Header)
	src, done, err := decode(r.Body, codings)
	if err != nil {
		return body{}, err
	}
	defer done()
	data, err := readCapped(src, limit, sizeHint(r, codings))
	b := body{data: data, read: int64(len(data)), decoded: len(codings) > 0}
	if b.read > limit {
		b.data, b.truncated = data[:limit], true
	}
	return b, err
}

// contentCodings lists the codings of Content-Encoding, identity left out.
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// sizeHint is the expected body size when the length is known and plain.
func sizeHint(r *http.Response, codings []string) int64 {
	if len(codings) > 0 || r.ContentLength < 0 {
		return -1
	}
	return r.ContentLength
}

// decode undoes the codings, last applied first; done releases the
// decoders.
func decode(r io.Reader, codings []string) (_ io.Reader, done func(), err error) {
	var closers []func()
	done = func() {
		for _, c := range closers {
			c()
		}
	}
	for _, c := range slices.Backward(codings) {
		var closer func()
		if r, closer, err = decoder(c, r); err != nil {
			done()
			return nil, nil, err
		}
		if closer != nil {
			closers = append(closers, closer)
		}
	}
	return r, done, nil
}

func decoder(coding string, r io.Reader) (io.Reader, func(), error) {
	var dr io.Reader
	var err error
	switch coding {
	case "gzip", "x-gzip":
		dr, err = gzipReader(r)
	case "deflate":
		dr, err = deflateReader(r)
	case "br":
		dr = brotli.NewReader(r)
	case "zstd":
		return zstdReader(r)
	default:
		err = fmt.Errorf("%w %q", ErrUnsupportedEncoding, coding)
	}
	return dr, nil, err
}

// zstdReader reads a zstd stream in the calling goroutine, its window
// capped at zstdMaxWindow; close releases the decoder.
func zstdReader(r io.Reader) (io.Reader, func(), error) {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow))
	if err != nil {
		return nil, nil, fmt.Errorf("decode zstd body: %w", err)
	}
	return zr, zr.Close, nil
}

// gzipReader reads a gzip stream; an empty body stays empty.
func gzipReader(r io.Reader) (io.Reader, error) {
	zr, err := gzip.NewReader(r)
	if errors.Is(err, io.EOF) {
		return strings.NewReader(""), nil
	}
	if err != nil {
		return nil, fmt.Errorf("decode gzip body: %w", err)
	}
	return zr, nil
}

// deflateReader reads "deflate", which servers send zlib-wrapped (as the
// RFC says) or raw; the first two bytes tell which.
func deflateReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if len(head) < 2 {
		if errors.Is(err, io.EOF) {
			return strings.NewReader(""), nil
		}
		return nil, fmt.Errorf("decode deflate body: %w", err)
	}
	if !isZlibHeader(head) {
		return flate.NewReader(br), nil
	}
	zr, err := zlib.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("decode deflate body: %w", err)
	}
	return zr, nil
}

// isZlibHeader checks the zlib CMF/FLG pair: method 8 and a valid check.
func isZlibHeader(h []byte) bool {
	return h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}

// readCapped reads r through a LimitReader of limit+1 bytes, growing its
// buffer no further than that, so memory stays about the cap.
func readCapped(r io.Reader, limit, hint int64) ([]byte, error) {
	max := limit + 1
	lr := io.LimitReader(r, max)
	buf := make([]byte, 0, firstSize(max, hint))
	for {
		if len(buf) == cap(buf) {
			buf = growTo(buf, min(2*int64(cap(buf)), max))
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, fmt.Errorf("read body: %w", err)
		}
	}
}

// firstSize is the first buffer: the known length (+1 to see EOF without
// growing) or initialBuffer, never more than max.
func firstSize(max, hint int64) int64 {
	if hint >= 0 {
		return min(hint+1, max)
	}
	return min(initialBuffer, max)
}

// growTo copies buf into a new buffer of capacity size (no-op when it
// already has that capacity).
func growTo(buf []byte, size int64) []byte {
	if int64(cap(buf)) >= size {
		return buf
	}
	nb := make([]byte, len(buf), size)
	copy(nb, buf)
	return nb
}
