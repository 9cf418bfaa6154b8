package checks

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync"

	"k8s.io/client-go/rest"
)

// kubeHTTPClient is the one HTTP client of a round's reads of the cluster:
// discovery, objects and the network policy agent share its connections,
// and the round's first request makes the only one (oneFirstConn), over
// which HTTP/2 carries every other. Each client of its own, or requests
// that all start before a connection exists, would each pay a TLS
// handshake with the API server.
func kubeHTTPClient(cfg *rest.Config) (*http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &oneFirstConn{next: rt, ready: make(chan struct{})}
	})
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the cluster's HTTP client: %w", err)
	}
	return hc, nil
}

// oneFirstConn lets the first request through alone: the others wait until
// it has its connection (or has ended, or their own context has), then go
// on, reusing that connection when the server speaks HTTP/2.
type oneFirstConn struct {
	next  http.RoundTripper
	once  sync.Once
	ready chan struct{}
}

func (o *oneFirstConn) RoundTrip(r *http.Request) (*http.Response, error) {
	first := false
	o.once.Do(func() { first = true })
	if !first {
		select {
		case <-o.ready:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return o.next.RoundTrip(r)
	}
	var release sync.Once
	open := func() { release.Do(func() { close(o.ready) }) }
	defer open()
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { open() }}
	return o.next.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
}
