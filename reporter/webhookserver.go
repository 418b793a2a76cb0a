package reporter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/netutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// webhookHTTPServer serves the conversion webhook within limits: a
// controller-runtime webhook.Server (the manager starts it with the
// webhooks, before the caches, and on every replica), but on a net/http
// server whose connections are bounded before any handler runs.
type webhookHTTPServer struct {
	addr string
	// listener, when set, is served instead of listening on addr:
	// ConversionOptions.Listener, or a test, hands over one opened on port
	// 0, so no other process can take the port between its choice and its
	// use.
	listener net.Listener
	// log says where the server listens once it does: the address bound,
	// which on port 0 the kernel chose.
	log     logr.Logger
	tls     func(*tls.Config)
	limits  webhookLimits
	mux     *http.ServeMux
	started atomic.Bool
}

var _ webhook.Server = (*webhookHTTPServer)(nil)

// NeedLeaderElection is false: every replica serves the webhook.
func (*webhookHTTPServer) NeedLeaderElection() bool { return false }

// Register serves hook at path.
func (s *webhookHTTPServer) Register(path string, hook http.Handler) { s.mux.Handle(path, hook) }

// WebhookMux is the server's mux.
func (s *webhookHTTPServer) WebhookMux() *http.ServeMux { return s.mux }

// StartedChecker is healthy once the server listens.
func (s *webhookHTTPServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if !s.started.Load() {
			return errors.New("the conversion webhook does not listen yet")
		}
		return nil
	}
}

// Start listens on the server's address and serves until ctx ends, then
// lets the reviews in flight finish for up to a minute.
func (s *webhookHTTPServer) Start(ctx context.Context) error {
	cfg := &tls.Config{}
	s.tls(cfg)
	ln := s.listener
	if ln == nil {
		var err error
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", s.addr); err != nil {
			return err
		}
	}
	s.log.Info("serving the ModelDeployment conversion webhook", "address", ln.Addr().String())
	// The limit is taken before the TLS handshake, so a connection that
	// never starts one holds a slot only until its deadline.
	ln = tls.NewListener(netutil.LimitListener(ln, s.limits.maxConnections), cfg)
	srv := &http.Server{
		Handler:     s.mux,
		BaseContext: func(net.Listener) context.Context { return ctx },
		// net/http bounds the TLS handshake by the shortest of its
		// timeouts, this one.
		ReadHeaderTimeout: s.limits.headerTimeout,
		MaxHeaderBytes:    webhookMaxHeaderBytes,
		IdleTimeout:       webhookIdleTimeout,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: webhookMaxStreams},
		// A client's failed handshakes are its own business, and would
		// otherwise flood the log with text it chose.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = srv.Shutdown(shutdown) // past the minute, the process exits anyway
	}()
	s.started.Store(true)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("the conversion webhook on %s: %w", s.addr, err)
	}
	<-stopped
	return nil
}
