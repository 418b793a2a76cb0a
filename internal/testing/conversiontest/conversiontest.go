// Package conversiontest serves the status reporter's ModelDeployment
// conversion webhook (reporter.ConversionHandler) on 127.0.0.1, with a
// certificate of its own, for tests that install deploy/base's CRD on a
// real API server. The shipped CRD names a Service, which such an API
// server cannot reach; Point aims it at this server instead, by URL, so
// that every request for v1alpha2 is converted for real and no traffic
// leaves the loopback interface.
package conversiontest

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/airunway-render/airunway-render/reporter"
)

// Server is a running conversion webhook.
type Server struct {
	srv *http.Server
	cfg apiextensionsv1.WebhookClientConfig
}

// Start serves the webhook on a free port of 127.0.0.1.
func Start() (*Server, error) {
	ca, cert, key, err := reporter.IssueWebhookCert("127.0.0.1")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(reporter.ConversionPath, reporter.ConversionHandler())
	s := &Server{srv: &http.Server{
		Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}},
	}}
	url := "https://" + ln.Addr().String() + reporter.ConversionPath
	s.cfg = apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: ca}
	go func() {
		if err := s.srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return s, nil
}

// Point aims a CRD's conversion webhook at the server; a CRD converted
// without a webhook is left alone.
func (s *Server) Point(crd *apiextensionsv1.CustomResourceDefinition) {
	if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
		cfg := s.cfg
		c.Webhook.ClientConfig = &cfg
	}
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
