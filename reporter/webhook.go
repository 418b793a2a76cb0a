package reporter

import (
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
	if err := mgr.AddReadyzCheck("conversion-certificate", func(*http.Request) error {
		_, err := serving.get(nil)
		return err
	}); err != nil {
		return err
	}
	return mgr.Add(&webhookServer{addr: o.Addr, serving: serving, log: log})
}

// webhookServer serves ConversionPath over TLS on every replica.
type webhookServer struct {
	addr    string
	serving *servingCert
	log     logr.Logger
}

func (s *webhookServer) NeedLeaderElection() bool { return false }

func (s *webhookServer) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle(ConversionPath, ConversionHandler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.serving.get},
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("conversion webhook: %w", err)
	}
	s.log.Info("serving the ModelDeployment conversion webhook", "address", ln.Addr().String(), "path", ConversionPath)
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

// certDirWatcher loads a certificate someone else issues into a directory
// (cert-manager's Secret mounted as a volume) and re-reads it every
// certRefresh, so a renewed certificate is served without a restart.
type certDirWatcher struct {
	dir     string
	serving *servingCert
	log     logr.Logger
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
		case <-time.After(certRefresh):
		}
	}
}
