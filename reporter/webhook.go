package reporter

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
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
	// when they change, and every 10 seconds. Without it the reporter keeps its own certificate in
	// Secret and writes its CA into the CRD.
	CertDir string
	// Secret is the Secret holding the reporter's own certificate.
	Secret types.NamespacedName
	// Hosts are the names the certificate is for: the Service's DNS names
	// (default: Service "airunway-status-reporter" in Secret's namespace).
	Hosts []string
	// CRD is the CustomResourceDefinition whose caBundle the leader keeps.
	CRD string
	// EnableHTTP2 lets clients speak HTTP/2 to the webhook; off, it speaks
	// HTTP/1.1 only (webhookTLS says why).
	EnableHTTP2 bool
	// Listener, when set, is served instead of listening on Addr (which
	// then only names the address in logs): a program embedding the
	// reporter, or a test, opens it on port 0 and names its address in the
	// CRD, so no other process can take the port in between.
	Listener net.Listener
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
		watcher, err := certDirWatcher(o.CertDir, serving)
		if err != nil {
			return err
		}
		if err := mgr.Add(watcher); err != nil {
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
	server, err := newWebhookServer(o.Addr, serving, defaultWebhookLimits(), o.EnableHTTP2)
	if err != nil {
		return err
	}
	server.listener = o.Listener
	server.log = log.WithValues("path", ConversionPath, "http2", o.EnableHTTP2)
	return mgr.Add(server)
}

// certDirWatcher loads the certificate someone else issues into dir
// (cert-manager's Secret mounted as a volume) into serving, which the
// server and the readiness check read as in the Secret mode: at once, so a
// missing or unreadable one fails the start, and again, once the watcher
// runs, whenever its files change and every 10 seconds (controller-
// runtime's certwatcher), so a renewed certificate is served without a
// restart.
func certDirWatcher(dir string, serving *servingCert) (*certwatcher.CertWatcher, error) {
	watcher, err := certwatcher.New(filepath.Join(dir, secretCert), filepath.Join(dir, secretKey))
	if err != nil {
		return nil, fmt.Errorf("the conversion webhook's certificate in %q: %w", dir, err)
	}
	watcher.RegisterCallback(func(c tls.Certificate) { serving.cert.Store(&c) })
	return watcher, nil
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
//
// The connection's bounds are the reporter's own server's
// (webhookHTTPServer), since a client can hold memory before any handler
// runs: controller-runtime's server lets each connection send 1 MiB of
// headers for 32 seconds, and accepts any number of connections, so 600
// connections trickling headers took 2.27 GB. Here a replica holds at most
// webhookMaxConnections connections; each has webhookHeaderTimeout for its
// TLS handshake and its headers, which may be at most webhookMaxHeaderBytes;
// one more waits in the kernel's accept queue, costing the reporter nothing.
// TestWebhookConnectionFlood floods a replica in a process of its own and
// checks its resident memory.
const (
	// webhookConcurrentReviews is how many reviews a replica reads and
	// converts at once. The API server's reviews carry one object and take
	// a millisecond or less, so three rarely wait; two replicas serve six.
	webhookConcurrentReviews = 3
	// webhookAdmissionWait is how long a review waits for a slot.
	webhookAdmissionWait = time.Second
	// webhookReadTimeout bounds reading a review's body: 8 MiB at under 1
	// MiB/s, far below what a cluster network carries.
	webhookReadTimeout = 10 * time.Second
	// webhookWriteTimeout bounds a review from its headers to the end of
	// the answer: the API server gives up on a webhook after 30 seconds
	// (k8s.io/apiserver/pkg/util/webhook), so nobody reads one later.
	webhookWriteTimeout = 30 * time.Second
	// webhookMaxConnections is how many connections a replica holds at
	// once: each costs at most about 100 KiB while it sends its headers
	// (TLS record buffers, the header bytes, a goroutine), so all of them
	// about 50 MiB. The API server keeps a few per replica.
	webhookMaxConnections = 1024
	// webhookHeaderTimeout bounds a connection's TLS handshake and each
	// request's headers, which the API server sends in one go.
	webhookHeaderTimeout = 3 * time.Second
	// webhookMaxHeaderBytes bounds a request's headers (net/http allows
	// 4 KiB more); the API server's are a few hundred bytes.
	webhookMaxHeaderBytes = 8 << 10
	// webhookIdleTimeout closes a kept-alive connection with no request:
	// the keep-alive of Go's and the API server's clients.
	webhookIdleTimeout = 90 * time.Second
	// webhookMaxStreams bounds the requests one HTTP/2 connection has in
	// flight (with --enable-http2).
	webhookMaxStreams = 2 * webhookConcurrentReviews
	// webhookHeapBudget is the most heap the webhook may take at its
	// bound, half the pod's memory limit; TestWebhookMemoryBound checks it.
	webhookHeapBudget = 256 << 20
	// webhookConnectionBudget is the most resident memory a replica may
	// take while floods of connections (webhookMaxConnections at a time)
	// hold it, the reporter's own baseline included: the other half of
	// the pod's limit. TestWebhookConnectionFlood checks it.
	webhookConnectionBudget = 256 << 20
)

// webhookLimits are the webhook handler's bounds; tests shorten them.
type webhookLimits struct {
	maxReviewBytes            int64
	concurrentReviews         int
	admissionWait             time.Duration
	readTimeout, writeTimeout time.Duration
	maxConnections            int
	headerTimeout             time.Duration
}

// defaultWebhookLimits are the bounds the reporter serves with.
func defaultWebhookLimits() webhookLimits {
	return webhookLimits{
		maxReviewBytes: maxReviewBytes, concurrentReviews: webhookConcurrentReviews, admissionWait: webhookAdmissionWait,
		readTimeout: webhookReadTimeout, writeTimeout: webhookWriteTimeout,
		maxConnections: webhookMaxConnections, headerTimeout: webhookHeaderTimeout,
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

// newWebhookServer is the webhook server on addr (host:port), serving
// ConversionPath within limits, with serving's certificate.
func newWebhookServer(addr string, serving *servingCert, limits webhookLimits, http2 bool) (*webhookHTTPServer, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("the conversion webhook's address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("the conversion webhook's address %q must name a port from 0 to 65535", addr)
	}
	server := &webhookHTTPServer{addr: net.JoinHostPort(host, strconv.Itoa(port)), tls: webhookTLS(serving, http2), limits: limits, mux: http.NewServeMux()}
	server.Register(ConversionPath, withDeadlines(limitConcurrency(conversionHandler(limits.maxReviewBytes), limits.concurrentReviews, limits.admissionWait), limits.readTimeout, limits.writeTimeout))
	return server, nil
}

// webhookTLS configures the server's TLS: serving's certificate, TLS 1.3
// or webhookCipherSuites, and HTTP/1.1 only unless http2. HTTP/2 is off
// by default, as kubebuilder scaffolds webhooks since the HTTP/2 Rapid
// Reset advisories (CVE-2023-44487, CVE-2023-39325): it multiplexes
// streams on one connection under limits of its own, where HTTP/1.1 holds
// one review per connection within the bounds above; the API server's
// client speaks either.
func webhookTLS(serving *servingCert, http2 bool) func(*tls.Config) {
	return func(c *tls.Config) {
		c.GetCertificate = serving.get
		c.MinVersion = tls.VersionTLS12
		c.CipherSuites = webhookCipherSuites
		c.NextProtos = []string{"http/1.1"}
		if http2 {
			c.NextProtos = []string{"h2", "http/1.1"}
		}
	}
}

// withDeadlines bounds reading a request's body to read and the whole
// answer to write, from when its headers are read, so that a client
// trickling its body or not reading the answer frees its slot
// (limitConcurrency) in time.
func withDeadlines(next http.Handler, read, write time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		// Both fail only on a writer that has no deadlines, which
		// net/http's never is.
		_ = rc.SetReadDeadline(now.Add(read))
		_ = rc.SetWriteDeadline(now.Add(write))
		next.ServeHTTP(w, r)
	})
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
