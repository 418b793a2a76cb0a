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
	"math"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The webhook's certificate, when the reporter manages it: a CA and a
// serving certificate for the Service's DNS names, kept in a Secret all
// replicas read, the CA written into the CRD's conversion caBundle by the
// leader. Both live a year, and the leader renews them when a third is
// left (renewal, keepCertificate): the new CA joins the caBundle first and
// the new certificate is served a certRefresh later, so the API server
// trusts every replica's certificate throughout. A year, not ten, so that
// the renewal runs in every install, and a leaked key is not good for
// long.
const (
	certValidity    = 365 * 24 * time.Hour
	certRenewBefore = certValidity / 3
	// certRefresh is how often replicas re-read the Secret and the leader
	// checks the caBundle (a CRD re-applied without it gets it back).
	certRefresh = time.Minute
	// certExpiryMargin is how long before its expiry a certificate stops
	// counting as ready: the API server checks it with its own clock, and
	// a renewed certificate has some certRefresh periods to arrive.
	certExpiryMargin = 5 * time.Minute
)

// Keys of the webhook Secret, as cert-manager and kubernetes.io/tls name
// them, and the certificate a renewal stages until the CRD trusts its CA.
const (
	secretCA       = "ca.crt"
	secretCert     = corev1.TLSCertKey
	secretKey      = corev1.TLSPrivateKeyKey
	secretNextCert = "next-tls.crt"
	secretNextKey  = "next-tls.key"
)

// webhookCert is the PEM of a CA (in the Secret, every CA the caBundle
// must hold: the current one and, while renewing, the next) and a serving
// certificate signed by one of them.
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

// ready is the readiness of the webhook's certificate at now: there is one,
// and it is valid now and for certExpiryMargin more. An expired
// certificate is still served (the API server refuses it anyway), but the
// replica is not ready, so the failure shows before any conversion does.
func (s *servingCert) ready(now time.Time) error {
	c := s.cert.Load()
	if c == nil {
		return errors.New("the conversion webhook has no certificate yet")
	}
	return checkValidity(c.Leaf, now)
}

// readyz is the readiness check "conversion-certificate".
func (s *servingCert) readyz(*http.Request) error { return s.ready(time.Now()) }

// checkValidity is nil when leaf is valid at now and for certExpiryMargin
// more.
func checkValidity(leaf *x509.Certificate, now time.Time) error {
	switch {
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("the conversion webhook's certificate is valid from %s, and it is %s: it must be valid now (check the node's clock)", leaf.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case now.After(leaf.NotAfter):
		return fmt.Errorf("the conversion webhook's certificate expired at %s, and it is %s: it must be renewed", leaf.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case leaf.NotAfter.Sub(now) < certExpiryMargin:
		return fmt.Errorf("the conversion webhook's certificate expires at %s, within %s: it must be renewed before", leaf.NotAfter.UTC().Format(time.RFC3339), certExpiryMargin)
	}
	return nil
}

// parseLeaf is the first certificate of a PEM chain.
func parseLeaf(chain []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("holds no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// ensureCertSecret reads the webhook Secret, creating it with a new
// certificate for hosts when it is missing. Replicas starting together
// race to create it; the loser reads the winner's. A Secret it finds is
// returned as it is, good or not: the leader verifies it (verifyServed)
// and reissues what fails, so that one replica, not all, writes it.
func ensureCertSecret(ctx context.Context, r client.Reader, w client.Writer, key types.NamespacedName, hosts []string) (*corev1.Secret, error) {
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
			return secret, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the webhook Secret %q: %w", key, err)
		}
		err = r.Get(ctx, key, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the webhook Secret %q: %w", key, err)
	}
	return secret, nil
}

// verifyServed is nil when the certificate secret says to serve is one the
// API server accepts for hosts from now until certExpiryMargin ahead: its
// key matches, it chains to a CA of ca.crt (those the leader writes into
// the caBundle), every host is among its names, and checkValidity passes.
// Otherwise it says what is wrong, and the leader reissues the
// certificate: after a change of namespace or --conversion-hosts, a
// hand-edited Secret, or a cluster switched off past its expiry.
func verifyServed(secret *corev1.Secret, hosts []string, now time.Time) error {
	for _, k := range []string{secretCA, secretCert, secretKey} {
		if len(secret.Data[k]) == 0 {
			return fmt.Errorf("it has no %q", k)
		}
	}
	if _, err := tls.X509KeyPair(secret.Data[secretCert], secret.Data[secretKey]); err != nil {
		return fmt.Errorf("its %q and %q are not a certificate and its key: %w", secretCert, secretKey, err)
	}
	leaf, err := parseLeaf(secret.Data[secretCert])
	if err != nil {
		return fmt.Errorf("its %q: %w", secretCert, err)
	}
	if err := checkValidity(leaf, now); err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data[secretCA]) {
		return fmt.Errorf("its %q holds no PEM certificate", secretCA)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("its certificate does not chain to a CA of its %q: %w", secretCA, err)
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return fmt.Errorf("its certificate is not for host %q of --conversion-hosts (it is for %q)", h, certNames(leaf))
		}
	}
	return nil
}

// certNames are the DNS names and IP addresses a certificate is for.
func certNames(c *x509.Certificate) []string {
	names := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// servedCert is the certificate a webhook Secret says to serve.
func servedCert(secret *corev1.Secret) *webhookCert {
	return &webhookCert{CA: secret.Data[secretCA], Cert: secret.Data[secretCert], Key: secret.Data[secretKey]}
}

// renewal is what the leader does to the webhook Secret at now, in two
// steps a certRefresh apart so that the CRD trusts a new CA before any
// replica serves a certificate it signed:
//
//   - stage: the served certificate expires within certRenewBefore. Issue
//     a new CA and certificate; the CA joins ca.crt (whose CAs the leader
//     writes into the caBundle), the certificate waits in next-tls.*.
//   - promote: the staged certificate's CA was already in the caBundle
//     when this sync began. Serve it; replicas re-read the Secret within a
//     certRefresh, trusted by the old CA or the new until then.
//
// A served certificate that fails verifyServed (unreadable, not chaining
// to ca.crt, not for every host, expired or within certExpiryMargin of
// it) is replaced at once: the API server refuses it already, so there is
// no service to keep.
type renewal int

const (
	renewNone renewal = iota
	renewStage
	renewPromote
	renewReplace
)

func (r renewal) String() string {
	switch r {
	case renewStage:
		return "staged a new CA and certificate"
	case renewPromote:
		return "serving the staged certificate"
	case renewReplace:
		return "replaced a certificate that failed verification"
	}
	return "none"
}

// renewalFor decides the renewal of secret for hosts at now;
// caBundleWasCurrent says whether the CRD held the Secret's ca.crt before
// this sync. With renewReplace comes why.
func renewalFor(secret *corev1.Secret, hosts []string, now time.Time, caBundleWasCurrent bool) (renewal, error) {
	if problem := verifyServed(secret, hosts, now); problem != nil {
		return renewReplace, problem
	}
	leaf, _ := parseLeaf(secret.Data[secretCert]) // verifyServed parsed it
	switch {
	case len(secret.Data[secretNextCert]) > 0:
		if caBundleWasCurrent {
			return renewPromote, nil
		}
		return renewNone, nil
	case leaf.NotAfter.Sub(now) < certRenewBefore:
		return renewStage, nil
	}
	return renewNone, nil
}

// renew changes secret as r says, issuing a certificate for hosts; the
// caller writes it.
func renew(secret *corev1.Secret, r renewal, hosts []string, now time.Time) error {
	if secret.Data == nil {
		secret.Data = map[string][]byte{} // a Secret created empty by hand
	}
	switch r {
	case renewPromote:
		secret.Data[secretCert], secret.Data[secretKey] = secret.Data[secretNextCert], secret.Data[secretNextKey]
		delete(secret.Data, secretNextCert)
		delete(secret.Data, secretNextKey)
		return nil
	case renewStage, renewReplace:
		cert, err := newWebhookCert(hosts, now)
		if err != nil {
			return err
		}
		if r == renewReplace {
			secret.Data[secretCA], secret.Data[secretCert], secret.Data[secretKey] = cert.CA, cert.Cert, cert.Key
			delete(secret.Data, secretNextCert)
			delete(secret.Data, secretNextKey)
			return nil
		}
		secret.Data[secretCA] = append(cert.CA, unexpiredCerts(secret.Data[secretCA], now)...)
		secret.Data[secretNextCert], secret.Data[secretNextKey] = cert.Cert, cert.Key
	}
	return nil
}

// unexpiredCerts are the PEM certificates of bundle still valid at now: a
// renewal keeps the CA that signed the served certificate and drops those
// of earlier renewals.
func unexpiredCerts(bundle []byte, now time.Time) []byte {
	var kept []byte
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && now.Before(c.NotAfter) {
			kept = append(kept, pem.EncodeToMemory(block)...)
		}
	}
	return kept
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
	retry := certRetry()
	for {
		next := certRefresh
		if err := m.sync(ctx); err != nil {
			next = retry.Step()
			m.log.Error(err, "keeping the conversion webhook's certificate", "retryIn", next)
		} else {
			retry = certRetry()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// certRetry is the back-off after a failed sync: soon at first (an API
// server that is restarting), doubling from a second up to certRefresh.
// Cap ends the doubling; Steps, unbounded, never does.
func certRetry() wait.Backoff {
	return wait.Backoff{Duration: time.Second, Factor: 2, Cap: certRefresh, Steps: math.MaxInt}
}

func (m *certManager) sync(ctx context.Context) error {
	secret, err := ensureCertSecret(ctx, m.reader, m.writer, m.secret, m.hosts)
	if err != nil {
		return err
	}
	if m.leader {
		if secret, err = m.keepCertificate(ctx, secret, time.Now()); err != nil {
			return err
		}
	}
	if err := m.serving.set(servedCert(secret)); err != nil {
		return fmt.Errorf("the webhook Secret %q holds no certificate to serve, until the leader replaces it: %w", m.secret, err)
	}
	return nil
}

// keepCertificate, on the leader, writes the Secret's CAs into the CRD's
// caBundle and renews the Secret's certificate when it is due, or
// replaces it when it fails verification, returning the Secret as it now
// is.
func (m *certManager) keepCertificate(ctx context.Context, secret *corev1.Secret, now time.Time) (*corev1.Secret, error) {
	// A Secret to be replaced is replaced before its CAs, maybe garbage,
	// reach the caBundle.
	if problem := verifyServed(secret, m.hosts, now); problem != nil {
		return m.renewSecret(ctx, secret, renewReplace, now, problem)
	}
	patched, err := patchCABundle(ctx, m.reader, m.writer, m.crdName, secret.Data[secretCA])
	if err != nil {
		return nil, err
	}
	if patched {
		m.log.Info("wrote the conversion webhook's CA into the CRD", "crd", m.crdName)
	}
	r, _ := renewalFor(secret, m.hosts, now, !patched)
	if r == renewNone {
		return secret, nil
	}
	return m.renewSecret(ctx, secret, r, now, nil)
}

// renewSecret does renewal r to secret, writes it, and writes its CAs
// into the caBundle; why, when set, is why the certificate was replaced.
func (m *certManager) renewSecret(ctx context.Context, secret *corev1.Secret, r renewal, now time.Time, why error) (*corev1.Secret, error) {
	if err := renew(secret, r, m.hosts, now); err != nil {
		return nil, err
	}
	// The read's resourceVersion makes this fail, to be retried, if
	// another replica wrote the Secret since.
	if err := m.writer.Update(ctx, secret); err != nil {
		return nil, fmt.Errorf("renewing the webhook certificate in Secret %q: %w", m.secret, err)
	}
	if why != nil {
		m.log.Info("reissued the conversion webhook's certificate", "secret", m.secret, "step", r.String(), "reason", why.Error())
	} else {
		m.log.Info("renewing the conversion webhook's certificate", "secret", m.secret, "step", r.String())
	}
	if r != renewPromote {
		if _, err := patchCABundle(ctx, m.reader, m.writer, m.crdName, secret.Data[secretCA]); err != nil {
			return nil, err
		}
	}
	return secret, nil
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
