package reporter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The webhook's certificate, when the reporter manages it: a CA and a
// serving certificate for the Service's DNS names, kept in a Secret all
// replicas read, the CA written into the CRD's conversion caBundle by the
// leader. Both live ten years: a rotation would have to reach the
// caBundle and every replica at once, which cert-manager does better (see
// docs/status-reporter.md, "Conversion webhook"), so there is none.
const (
	certValidity = 10 * 365 * 24 * time.Hour
	// certRefresh is how often replicas re-read the Secret and the leader
	// checks the caBundle (a CRD re-applied without it gets it back).
	certRefresh = time.Minute
)

// Keys of the webhook Secret, as cert-manager and kubernetes.io/tls name
// them.
const (
	secretCA   = "ca.crt"
	secretCert = corev1.TLSCertKey
	secretKey  = corev1.TLSPrivateKeyKey
)

// webhookCert is the PEM of a CA and a serving certificate signed by it.
type webhookCert struct {
	CA, Cert, Key []byte
}

// newWebhookCert issues a CA and a serving certificate for hosts (DNS
// names, or IP addresses such as 127.0.0.1 for tests).
func newWebhookCert(hosts []string, now time.Time) (*webhookCert, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "airunway-status-reporter webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certValidity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certValidity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &webhookCert{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// servingCert holds the certificate the webhook serves, swapped in place
// when the Secret changes.
type servingCert struct {
	cert atomic.Pointer[tls.Certificate]
}

func (s *servingCert) set(c *webhookCert) error {
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return err
	}
	s.cert.Store(&pair)
	return nil
}

func (s *servingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("no webhook certificate yet")
}

// ensureCertSecret reads the webhook Secret, creating it with a new
// certificate for hosts when it is missing. Replicas starting together
// race to create it; the loser reads the winner's.
func ensureCertSecret(ctx context.Context, r client.Reader, w client.Writer, key types.NamespacedName, hosts []string) (*webhookCert, error) {
	secret := &corev1.Secret{}
	err := r.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		cert, issueErr := newWebhookCert(hosts, time.Now())
		if issueErr != nil {
			return nil, issueErr
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"app.kubernetes.io/name": "airunway-status-reporter"}},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{secretCA: cert.CA, secretCert: cert.Cert, secretKey: cert.Key},
		}
		err = w.Create(ctx, secret)
		if err == nil {
			return cert, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the webhook Secret %s: %w", key, err)
		}
		err = r.Get(ctx, key, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the webhook Secret %s: %w", key, err)
	}
	cert := &webhookCert{CA: secret.Data[secretCA], Cert: secret.Data[secretCert], Key: secret.Data[secretKey]}
	if len(cert.CA) == 0 || len(cert.Cert) == 0 || len(cert.Key) == 0 {
		return nil, fmt.Errorf("the webhook Secret %s must hold %s, %s and %s; delete it and the reporter creates a new one", key, secretCA, secretCert, secretKey)
	}
	return cert, nil
}

// patchCABundle writes the CA into the CRD's conversion webhook, through
// server-side apply with the reporter's own field manager, so a GitOps
// engine applying the CRD without a caBundle neither removes it nor shows
// it as drift. It writes nothing when the bundle is already there.
func patchCABundle(ctx context.Context, r client.Reader, w client.Writer, crdName string, ca []byte) (bool, error) {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := r.Get(ctx, types.NamespacedName{Name: crdName}, crd); err != nil {
		return false, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	current, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	want := base64.StdEncoding.EncodeToString(ca)
	if current == want {
		return false, nil
	}
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	if strategy != "Webhook" {
		return false, fmt.Errorf("CRD %s converts with strategy %q, not Webhook: apply deploy/base's CRD", crdName, strategy)
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crdName},
		"spec": map[string]any{"conversion": map[string]any{
			"strategy": "Webhook",
			"webhook":  map[string]any{"clientConfig": map[string]any{"caBundle": want}},
		}},
	}}
	return true, w.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(FieldManager+"-cabundle"), client.ForceOwnership)
}

// certManager keeps the webhook's certificate: every replica re-reads the
// Secret every certRefresh (leader false); the leader's instance (leader
// true) also keeps the caBundle. Reads go to the API server, not a cache:
// the reporter watches no Secrets.
type certManager struct {
	reader  client.Reader
	writer  client.Writer
	secret  types.NamespacedName
	hosts   []string
	crdName string
	serving *servingCert
	log     logr.Logger
	leader  bool
}

func (m *certManager) NeedLeaderElection() bool { return m.leader }

func (m *certManager) Start(ctx context.Context) error {
	retry := time.Second
	for {
		next := certRefresh
		if err := m.sync(ctx); err != nil {
			// Retry soon (an API server that is restarting), backing off
			// to certRefresh.
			m.log.Error(err, "keeping the conversion webhook's certificate", "retryIn", retry)
			next, retry = retry, min(2*retry, certRefresh)
		} else {
			retry = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

func (m *certManager) sync(ctx context.Context) error {
	cert, err := ensureCertSecret(ctx, m.reader, m.writer, m.secret, m.hosts)
	if err != nil {
		return err
	}
	if err := m.serving.set(cert); err != nil {
		return fmt.Errorf("the webhook Secret %s: %w", m.secret, err)
	}
	if !m.leader {
		return nil
	}
	patched, err := patchCABundle(ctx, m.reader, m.writer, m.crdName, cert.CA)
	if patched {
		m.log.Info("wrote the conversion webhook's CA into the CRD", "crd", m.crdName)
	}
	return err
}

// IssueWebhookCert issues a CA and a serving certificate signed by it for
// hosts (DNS names, or IP addresses such as 127.0.0.1), as PEM: what the
// reporter keeps in its Secret, for tests that serve ConversionHandler
// themselves.
func IssueWebhookCert(hosts ...string) (ca, cert, key []byte, err error) {
	c, err := newWebhookCert(hosts, time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	return c.CA, c.Cert, c.Key, nil
}
