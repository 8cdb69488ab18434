package testbed

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Paths of a HeaderWitness: the page a browser opens and the API its
// script calls with fetch().
const (
	WitnessPagePath = "/page"
	WitnessXHRPath  = "/api/items?query=phone"
)

// HeaderField is one header as a client sent it: the name lower case (as
// HTTP/2 carries it) and the value.
type HeaderField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// WitnessedRequest is one request a HeaderWitness answered.
type WitnessedRequest struct {
	// Path is the request path with its query.
	Path string
	// Proto is "HTTP/2.0" or "HTTP/1.1".
	Proto string
	// Fields are the regular headers in the order sent (HTTP/2 only:
	// net/http loses the order of HTTP/1.1 headers, so there they come
	// sorted by name).
	Fields []HeaderField
}

// HeaderWitness is an HTTPS server (h2 and http/1.1, the run's own CA)
// that records the headers of every request in the order the client
// sent them. Its page calls WitnessXHRPath with fetch(), with the
// extra headers it was started with, so a real browser shows both a
// navigation and an XHR.
type HeaderWitness struct {
	// CA signs the witness's certificate.
	CA   *CA
	ln   net.Listener
	srv  *http.Server
	reqs chan WitnessedRequest
	page []byte
	done chan struct{}
}

// StartHeaderWitness listens on a free 127.0.0.1 port; xhr are the
// headers its page's fetch() adds, in order.
func StartHeaderWitness(xhr []HeaderField) (*HeaderWitness, error) {
	ca, err := NewCA()
	if err != nil {
		return nil, err
	}
	cert, err := ca.ServerCert()
	if err != nil {
		return nil, err
	}
	page, err := witnessPage(xhr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("header witness listen: %w", err)
	}
	w := &HeaderWitness{CA: ca, reqs: make(chan WitnessedRequest, 64), page: page, done: make(chan struct{})}
	w.ln = &helloListener{Listener: ln, base: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ConnContext: connContext, Protocols: &protos}
	go w.serve()
	return w, nil
}

var witnessTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><title>witness</title></head><body><p id="out">waiting</p>
<script>fetch({{.URL}}, {headers: {{.Headers}}}).then(r => r.text()).then(t => {document.getElementById("out").textContent = t})</script>
</body></html>`))

// witnessPage is the page whose script fetches WitnessXHRPath with xhr.
func witnessPage(xhr []HeaderField) ([]byte, error) {
	hs := make([]string, len(xhr))
	for i, f := range xhr { // a JS object keeps string keys in insertion order
		k, _ := json.Marshal(f.Name)
		v, _ := json.Marshal(f.Value)
		hs[i] = string(k) + ":" + string(v)
	}
	var b strings.Builder
	err := witnessTemplate.Execute(&b, map[string]any{
		"URL": WitnessXHRPath, "Headers": template.JS("{" + strings.Join(hs, ",") + "}")})
	if err != nil {
		return nil, fmt.Errorf("witness page: %w", err)
	}
	return []byte(b.String()), nil
}

func (w *HeaderWitness) serve() {
	defer close(w.done)
	if err := w.srv.Serve(w.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return
	}
}

// URL is the witness's https base URL.
func (w *HeaderWitness) URL() string { return "https://" + w.ln.Addr().String() }

// ServeHTTP records the request and answers the page, the API's JSON or
// 404.
func (w *HeaderWitness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	select {
	case w.reqs <- WitnessedRequest{Path: r.RequestURI, Proto: r.Proto, Fields: orderedFields(r)}:
	default: // nobody is reading; drop
	}
	switch r.RequestURI {
	case WitnessPagePath:
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Write(w.page)
	case WitnessXHRPath:
		rw.Header().Set("Content-Type", "application/json")
		rw.Write([]byte(`{"products":[]}`))
	default:
		http.NotFound(rw, r)
	}
}

// orderedFields are r's regular headers in the order sent on HTTP/2,
// sorted by name on HTTP/1.1.
func orderedFields(r *http.Request) []HeaderField {
	var out []HeaderField
	if h2, ok := h2RequestOf(r); ok {
		for _, f := range h2.Fields {
			if !f.IsPseudo() {
				out = append(out, HeaderField{Name: f.Name, Value: f.Value})
			}
		}
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[k] {
			out = append(out, HeaderField{Name: strings.ToLower(k), Value: v})
		}
	}
	return out
}

// Next waits for the next request to path (others are skipped: a
// browser's favicon, its background calls) or the end of ctx.
func (w *HeaderWitness) Next(ctx context.Context, path string) (WitnessedRequest, error) {
	for {
		select {
		case r := <-w.reqs:
			if r.Path == path {
				return r, nil
			}
		case <-ctx.Done():
			return WitnessedRequest{}, fmt.Errorf("no request to %s witnessed: %w", path, ctx.Err())
		}
	}
}

// Close stops the witness and waits for it.
func (w *HeaderWitness) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.srv.Close()
	}
	<-w.done
}
