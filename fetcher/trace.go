package fetcher

import (
	"net/http/httptrace"
	"sync/atomic"
)

// phase is how far a request got, to tell whose timeout a timeout was.
type phase int32

const (
	phaseIdle       phase = iota
	phaseConnecting       // waiting for a connection: dial and proxy handshake
	phaseTLS              // TLS handshake with the target
	phaseConnected        // connection stands: request, headers, body
)

// phaseTracker follows one Do through httptrace hooks; hooks may run on
// the transport's goroutines, hence the atomic.
type phaseTracker struct{ p atomic.Int32 }

func (t *phaseTracker) set(p phase) { t.p.Store(int32(p)) }

func (t *phaseTracker) get() phase { return phase(t.p.Load()) }

// trace is the ClientTrace feeding the tracker; each redirect hop starts
// again at phaseConnecting.
func (t *phaseTracker) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:           func(string) { t.set(phaseConnecting) },
		TLSHandshakeStart: func() { t.set(phaseTLS) },
		GotConn:           func(httptrace.GotConnInfo) { t.set(phaseConnected) },
	}
}
