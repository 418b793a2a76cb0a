package reporter

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/airunway-render/airunway-render/api/hub"
)

// ConversionOptions configure the ModelDeployment conversion webhook. With
// Addr empty the reporter serves none (the library's default; the
// command's flag defaults to ":9443").
type ConversionOptions struct {
	// Addr is the HTTPS address of ConversionPath.
	Addr string
	// CertDir, when set, holds tls.crt and tls.key issued by someone else
	// (cert-manager, which also injects the caBundle); they are re-read
	// every minute. Without it the reporter keeps its own certificate in
	// Secret and writes its CA into the CRD.
	CertDir string
	// Secret is the Secret holding the reporter's own certificate.
	Secret types.NamespacedName
	// Hosts are the names the certificate is for: the Service's DNS names
	// (default: Service "airunway-status-reporter" in Secret's namespace).
	Hosts []string
	// CRD is the CustomResourceDefinition whose caBundle the leader keeps.
	CRD string
}

// Defaults of the conversion webhook.
const (
	DefaultConversionSecret = "airunway-status-reporter-webhook-tls"
	DefaultConversionCRD    = "modeldeployments." + hub.Group
	// WebhookService is the Service in front of every replica's webhook
	// (deploy/base/service.yaml), which the CRD names.
	WebhookService = "airunway-status-reporter"
)

// ServiceHosts are the DNS names of a Service, as the API server dials a
// webhook behind it (`<service>.<namespace>.svc`).
func ServiceHosts(service, namespace string) []string {
	return []string{service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}

// addConversionWebhook adds the webhook server on every replica and what
// keeps its certificate, and a readiness check that holds the pod out of
// the Service until it has a certificate to serve.
func addConversionWebhook(mgr manager.Manager, o ConversionOptions, log logr.Logger) error {
	serving := &servingCert{}
	if o.CertDir != "" {
		if err := mgr.Add(&certDirWatcher{dir: o.CertDir, serving: serving, log: log}); err != nil {
			return err
		}
	} else {
		if o.Secret.Name == "" {
			o.Secret.Name = DefaultConversionSecret
		}
		if o.Secret.Namespace == "" {
			return errors.New("the conversion webhook keeps its certificate in a Secret and needs its namespace")
		}
		if len(o.Hosts) == 0 {
			o.Hosts = ServiceHosts(WebhookService, o.Secret.Namespace)
		}
		if o.CRD == "" {
			o.CRD = DefaultConversionCRD
		}
		for _, leader := range []bool{false, true} {
			m := &certManager{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), secret: o.Secret, hosts: o.Hosts, crdName: o.CRD, serving: serving, log: log, leader: leader}
			if err := mgr.Add(m); err != nil {
				return err
			}
		}
	}
	if err := mgr.AddReadyzCheck("conversion-certificate", serving.readyz); err != nil {
		return err
	}
	return mgr.Add(&webhookServer{addr: o.Addr, serving: serving, limits: defaultWebhookLimits(), log: log})
}

// The webhook server's bounds, so that what a replica holds for its
// clients, hostile or not, is stated. deploy/base gives the pod 512Mi; the
// reporter's own heap is about 50 MiB at 1,000 models
// (docs/performance.md). At most webhookConcurrentReviews reviews of at
// most maxReviewBytes are read and converted at once. Each holds its body
// and its answer (conversionHandler), decoding an object of
// maxReviewObjectBytes made of tiny fields makes some 20 times its size in
// garbage, and the collector lets garbage grow as large as the live heap
// (GOGC=100) before it runs. TestWebhookMemoryBound measures the heap's
// growth at the bound: 105 to 190 MiB, the most for objects of tiny
// fields (four at once took up to 230 MiB); webhookHeapBudget, half the
// pod's limit, is what it checks. A review past the bound waits
// webhookAdmissionWait for a slot, then gets HTTP 429 with Retry-After,
// which the API server's client retries (client-go retries a 429 or 5xx
// that says Retry-After, up to 10 times).
const (
	// webhookConcurrentReviews is how many reviews a replica reads and
	// converts at once. The API server's reviews carry one object and take
	// a millisecond or less, so three rarely wait; two replicas serve six.
	webhookConcurrentReviews = 3
	// webhookAdmissionWait is how long a review waits for a slot.
	webhookAdmissionWait = time.Second
	// webhookReadHeaderTimeout bounds the TLS handshake and the headers: the
	// API server sends both at once.
	webhookReadHeaderTimeout = 5 * time.Second
	// webhookReadTimeout bounds reading a whole request: 8 MiB at under 1
	// MiB/s, far below what a cluster network carries.
	webhookReadTimeout = 10 * time.Second
	// webhookWriteTimeout bounds a request from its headers to the end of
	// the answer: the API server gives up on a webhook after 30 seconds
	// (k8s.io/apiserver/pkg/util/webhook), so nobody reads one later.
	webhookWriteTimeout = 30 * time.Second
	// webhookIdleTimeout closes a kept-alive connection with no request.
	// It is longer than the API server's client keeps one idle (90
	// seconds, net/http's default), so that client closes first and never
	// sends a review on a connection the server is closing.
	webhookIdleTimeout = 2 * time.Minute
	// webhookMaxHeaderBytes bounds a request's headers; the API server
	// sends a few hundred bytes.
	webhookMaxHeaderBytes = 16 << 10
	// webhookHeapBudget is the most heap the webhook may take at its
	// bound, half the pod's memory limit; TestWebhookMemoryBound checks it.
	webhookHeapBudget = 256 << 20
)

// webhookLimits are the webhook server's bounds; tests shorten them.
type webhookLimits struct {
	maxReviewBytes                                            int64
	concurrentReviews                                         int
	admissionWait                                             time.Duration
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	maxHeaderBytes                                            int
}

// defaultWebhookLimits are the bounds the reporter serves with.
func defaultWebhookLimits() webhookLimits {
	return webhookLimits{
		maxReviewBytes: maxReviewBytes, concurrentReviews: webhookConcurrentReviews, admissionWait: webhookAdmissionWait,
		readHeaderTimeout: webhookReadHeaderTimeout, readTimeout: webhookReadTimeout,
		writeTimeout: webhookWriteTimeout, idleTimeout: webhookIdleTimeout, maxHeaderBytes: webhookMaxHeaderBytes,
	}
}

// webhookCipherSuites are the TLS 1.2 suites the webhook accepts: ECDHE,
// for forward secrecy, with an AEAD cipher; no CBC, SHA-1 or RSA key
// exchange. Both ECDSA (the reporter's own certificate) and RSA
// (cert-manager's default) keys. TLS 1.3's suites are all AEAD.
var webhookCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// webhookServer serves ConversionPath over TLS on every replica.
type webhookServer struct {
	addr    string
	serving *servingCert
	limits  webhookLimits
	log     logr.Logger
}

func (s *webhookServer) NeedLeaderElection() bool { return false }

func (s *webhookServer) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("conversion webhook: %w", err)
	}
	s.log.Info("serving the ModelDeployment conversion webhook", "address", ln.Addr().String(), "path", ConversionPath)
	return s.serve(ctx, ln)
}

// serve serves the webhook on ln until ctx ends.
func (s *webhookServer) serve(ctx context.Context, ln net.Listener) error {
	srv := s.httpServer()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("conversion webhook: %w", err)
	}
	return nil
}

// httpServer is the webhook's server, with its bounds. It speaks HTTP/1.1
// only: its timeouts and bounds are per connection there, while HTTP/2
// multiplexes streams under limits of its own (the reason kubebuilder
// scaffolds webhooks without it since CVE-2023-44487); the API server's
// client speaks either.
func (s *webhookServer) httpServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle(ConversionPath, limitConcurrency(conversionHandler(s.limits.maxReviewBytes), s.limits.concurrentReviews, s.limits.admissionWait))
	protocols := &http.Protocols{}
	protocols.SetHTTP1(true)
	return &http.Server{
		Handler:           mux,
		Protocols:         protocols,
		ReadHeaderTimeout: s.limits.readHeaderTimeout,
		ReadTimeout:       s.limits.readTimeout,
		WriteTimeout:      s.limits.writeTimeout,
		IdleTimeout:       s.limits.idleTimeout,
		MaxHeaderBytes:    s.limits.maxHeaderBytes,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: webhookCipherSuites, GetCertificate: s.serving.get},
	}
}

// limitConcurrency lets at most slots requests into next at once; one
// more waits up to wait for a slot, then gets HTTP 429 with Retry-After
// before its body is read, so refused requests cost no body memory and
// waiting ones cannot pile up beyond a second's worth.
func limitConcurrency(next http.Handler, slots int, wait time.Duration) http.Handler {
	sem := make(chan struct{}, slots)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case sem <- struct{}{}:
		case <-timer.C:
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("the webhook is converting %d reviews already, the most it converts at once: retry later", slots), http.StatusTooManyRequests)
			return
		case <-r.Context().Done():
			return
		}
		defer func() { <-sem }()
		next.ServeHTTP(w, r)
	})
}

// certDirWatcher loads a certificate someone else issues into a directory
// (cert-manager's Secret mounted as a volume) and re-reads it every
// certRefresh, so a renewed certificate is served without a restart.
type certDirWatcher struct {
	dir     string
	serving *servingCert
	log     logr.Logger
	// refresh is how often it re-reads; zero is certRefresh.
	refresh time.Duration
}

func (w *certDirWatcher) NeedLeaderElection() bool { return false }

func (w *certDirWatcher) Start(ctx context.Context) error {
	for {
		cert, err := os.ReadFile(filepath.Join(w.dir, secretCert))
		if err == nil {
			var key []byte
			if key, err = os.ReadFile(filepath.Join(w.dir, secretKey)); err == nil {
				err = w.serving.set(&webhookCert{Cert: cert, Key: key})
			}
		}
		if err != nil {
			w.log.Error(err, "loading the conversion webhook's certificate", "dir", w.dir)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(cmp.Or(w.refresh, certRefresh)):
		}
	}
}
