package web

import (
	"bufio"
	"net/http"
)

// flushWriter buffers a streamed answer and flushes it to the client every
// flushEvery bytes, remembering the first write error.
type flushWriter struct {
	bw  *bufio.Writer
	fl  http.Flusher
	n   int
	err error
}

// flushEvery is how many bytes a streamed answer sends at a time.
const flushEvery = 64 << 10

func newFlushWriter(w http.ResponseWriter, fl http.Flusher) *flushWriter {
	return &flushWriter{bw: bufio.NewWriterSize(w, flushEvery), fl: fl}
}

// Write lets json.Encoder write rows into the stream.
func (f *flushWriter) Write(p []byte) (int, error) {
	f.write(p)
	return len(p), f.err
}

func (f *flushWriter) write(p []byte) {
	if f.err != nil {
		return
	}
	_, f.err = f.bw.Write(p)
	f.n += len(p)
	if f.n >= flushEvery {
		f.flush()
	}
}

func (f *flushWriter) flush() {
	if f.err == nil {
		f.err = f.bw.Flush()
	}
	if f.fl != nil && f.err == nil {
		f.fl.Flush()
	}
	f.n = 0
}
