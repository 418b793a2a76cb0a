package reporter

// Tests of the webhook certificate's validity: readiness fails on a
// certificate that is expired, not yet valid, or about to expire, in both
// modes; the reporter renews its own certificate before it expires, so
// that the API server trusts the served certificate at every step. The
// Secret mode runs against controller-runtime's in-memory client, which
// keeps resourceVersions and applies server-side apply patches, so no API
// server is needed.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// issuedAt is a certificate issued (valid from an hour before) at the given
// time, so that it expires certValidity later.
func issuedAt(t *testing.T, at time.Time) *webhookCert {
	t.Helper()
	c, err := newWebhookCert([]string{"127.0.0.1"}, at)
	require.NoError(t, err)
	return c
}

// readyz serves the check as the manager's /readyz does and returns its
// status and body.
func readyz(check healthz.Checker) (int, string) {
	rec := httptest.NewRecorder()
	h := http.StripPrefix("/readyz", &healthz.Handler{Checks: map[string]healthz.Checker{"conversion-certificate": check}})
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz?verbose", nil))
	return rec.Code, rec.Body.String()
}

// TestCertificateReadiness: /readyz's "conversion-certificate" check
// fails without a certificate, and with one expired, not yet valid, or
// expiring within certExpiryMargin; it passes for a valid one.
func TestCertificateReadiness(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name   string
		issued time.Time // zero: no certificate
		want   string    // "" when ready
	}{
		{"none", time.Time{}, "the conversion webhook has no certificate yet"},
		{"valid", now, ""},
		{"expired", now.Add(-certValidity - time.Hour), "the conversion webhook's certificate expired at"},
		{"not yet valid", now.Add(2 * time.Hour), "the conversion webhook's certificate is valid from"},
		{"expiring", now.Add(-certValidity + certExpiryMargin/2), "the conversion webhook's certificate expires at"},
		{"expiring after the margin", now.Add(-certValidity + 2*certExpiryMargin), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serving := &servingCert{}
			if !tc.issued.IsZero() {
				require.NoError(t, serving.set(issuedAt(t, tc.issued)))
			}
			code, body := readyz(serving.readyz)
			if tc.want == "" {
				require.Equal(t, http.StatusOK, code, body)
				return
			}
			require.Equal(t, http.StatusInternalServerError, code)
			require.ErrorContains(t, serving.ready(now), tc.want)
		})
	}
}

// TestCertRetryBacksOff: a failed sync is retried after a second, then
// twice as long each time up to certRefresh.
func TestCertRetryBacksOff(t *testing.T) {
	t.Parallel()
	retry := certRetry()
	var delays []time.Duration
	for range 9 {
		delays = append(delays, retry.Step())
	}
	s := time.Second
	require.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, certRefresh, certRefresh, certRefresh}, delays)
}

// TestExpiredCertificateServed: a webhook serving an expired certificate
// is refused by a TLS client that checks it, as the API server does, and
// reports not ready meanwhile.
func TestExpiredCertificateServed(t *testing.T) {
	t.Parallel()
	w := startWebhook(t, testLimits(), time.Now().Add(-certValidity-time.Hour))
	_, err := tls.Dial("tcp", w.addr, &tls.Config{RootCAs: w.roots})
	var invalid x509.CertificateInvalidError
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, x509.Expired, invalid.Reason)
	code, body := readyz(w.serving.readyz)
	require.Equal(t, http.StatusInternalServerError, code)
	require.Contains(t, body, "[-]conversion-certificate failed")
}

// TestCertDirReadiness: with --conversion-cert-dir, an expired certificate
// in the directory makes the replica not ready, and a renewed one, written
// by cert-manager, makes it ready once the watcher re-reads them.
func TestCertDirReadiness(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(c *webhookCert) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, secretCert), c.Cert, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, secretKey), c.Key, 0o600))
	}
	write(issuedAt(t, time.Now().Add(-certValidity-time.Hour)))
	serving := &servingCert{}
	watcher, err := certDirWatcher(dir, serving)
	require.NoError(t, err)
	require.ErrorContains(t, serving.ready(time.Now()), "expired at", "loaded at once")
	code, _ := readyz(serving.readyz)
	require.Equal(t, http.StatusInternalServerError, code)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- watcher.WithWatchInterval(20 * time.Millisecond).Start(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	write(issuedAt(t, time.Now()))
	require.Eventually(t, func() bool { return serving.ready(time.Now()) == nil }, 5*time.Minute, 10*time.Millisecond,
		"the watcher never loaded the renewed certificate") // the bound only catches a watcher that never does
}

// TestCertDirMissing: a directory without a certificate fails the start,
// naming it.
func TestCertDirMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := certDirWatcher(dir, &servingCert{})
	require.ErrorContains(t, err, fmt.Sprintf("the conversion webhook's certificate in %q", dir))
}

// certCluster is the Secret and the CRD the reporter keeps its certificate
// in, in controller-runtime's in-memory client.
type certCluster struct {
	client client.Client
	secret types.NamespacedName
	crd    string
}

func newCertCluster(t *testing.T, secret *corev1.Secret) *certCluster {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": DefaultConversionCRD},
		"spec": map[string]any{"conversion": map[string]any{
			"strategy": "Webhook",
			"webhook":  map[string]any{"clientConfig": map[string]any{"service": map[string]any{"name": WebhookService, "namespace": "airunway-system"}}},
		}},
	}}
	b := fake.NewClientBuilder().WithObjects(crd)
	if secret != nil {
		b = b.WithObjects(secret)
	}
	return &certCluster{client: b.Build(), secret: types.NamespacedName{Namespace: "airunway-system", Name: DefaultConversionSecret}, crd: DefaultConversionCRD}
}

// manager is a replica's certManager; leader says whether it is the
// leader's instance.
func (c *certCluster) manager(serving *servingCert, leader bool) *certManager {
	return &certManager{reader: c.client, writer: c.client, secret: c.secret, hosts: []string{"127.0.0.1"}, crdName: c.crd, serving: serving, log: logr.Discard(), leader: leader}
}

func (c *certCluster) getSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, c.client.Get(context.Background(), c.secret, s))
	return s
}

// caBundle is the CRD's caBundle, as the API server trusts it.
func (c *certCluster) caBundle(t *testing.T) *x509.CertPool {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	require.NoError(t, c.client.Get(context.Background(), types.NamespacedName{Name: c.crd}, crd))
	encoded, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	bundle, err := base64.StdEncoding.DecodeString(encoded)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(bundle), "the CRD has a caBundle")
	return pool
}

// requireTrusted checks the API server, trusting the CRD's caBundle, would
// accept the certificate serving serves, at now.
func (c *certCluster) requireTrusted(t *testing.T, serving *servingCert, now time.Time) {
	t.Helper()
	cert, err := serving.get(nil)
	require.NoError(t, err)
	_, err = cert.Leaf.Verify(x509.VerifyOptions{Roots: c.caBundle(t), DNSName: "127.0.0.1", CurrentTime: now})
	require.NoError(t, err, "the API server must trust the served certificate")
}

// webhookSecret is the webhook Secret holding cert.
func webhookSecret(cert *webhookCert) *corev1.Secret {
	s := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{secretCA: cert.CA, secretCert: cert.Cert, secretKey: cert.Key}}
	s.Namespace, s.Name = "airunway-system", DefaultConversionSecret
	return s
}

// TestCertRenewal: the leader renews a certificate with less than
// certRenewBefore left in two syncs (stage a new CA into the caBundle,
// then serve the certificate it signed), the API server trusting every
// replica's certificate at each step, including a replica that has not
// re-read the Secret yet; a replica that is not the leader never writes.
func TestCertRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	old := issuedAt(t, now.Add(-certValidity+certRenewBefore-24*time.Hour)) // a day past when renewal is due
	c := newCertCluster(t, webhookSecret(old))
	leader, standby := &servingCert{}, &servingCert{}

	// A standby serves what the Secret holds and writes nothing.
	before := c.getSecret(t).ResourceVersion
	require.NoError(t, c.manager(standby, false).sync(ctx))
	require.Equal(t, before, c.getSecret(t).ResourceVersion, "a standby never renews")
	require.Equal(t, old.Cert, certPEM(t, standby))

	// First leader sync: the CA is written into the CRD, the renewal is
	// staged, the old certificate still served.
	require.NoError(t, c.manager(leader, true).sync(ctx))
	staged := c.getSecret(t)
	require.NotEmpty(t, staged.Data[secretNextCert], "a renewal is staged")
	require.Equal(t, old.Cert, staged.Data[secretCert])
	require.Equal(t, old.Cert, certPEM(t, leader))
	c.requireTrusted(t, leader, now)
	c.requireTrusted(t, standby, now)
	require.NoError(t, c.manager(standby, false).sync(ctx))
	c.requireTrusted(t, standby, now)

	// Second: the caBundle held the new CA before it began, so the staged
	// certificate is served; a standby still serving the old one is
	// trusted too until it re-reads.
	require.NoError(t, c.manager(leader, true).sync(ctx))
	renewed := c.getSecret(t)
	require.Equal(t, staged.Data[secretNextCert], renewed.Data[secretCert])
	require.Empty(t, renewed.Data[secretNextCert])
	c.requireTrusted(t, leader, now)
	c.requireTrusted(t, standby, now)
	require.NoError(t, c.manager(standby, false).sync(ctx))
	c.requireTrusted(t, standby, now)
	leaf, err := parseLeaf(renewed.Data[secretCert])
	require.NoError(t, err)
	require.WithinDuration(t, now.Add(certValidity), leaf.NotAfter, time.Minute, "a new year")
	require.NoError(t, leader.ready(now))

	// Nothing more to do until the next renewal is due.
	require.NoError(t, c.manager(leader, true).sync(ctx))
	require.Equal(t, renewed.ResourceVersion, c.getSecret(t).ResourceVersion)

	// The old CA stays in the bundle until it expires; the next renewal
	// drops it.
	next := now.Add(certValidity - certRenewBefore + time.Hour)
	secret := c.getSecret(t)
	m := c.manager(leader, true)
	_, err = m.keepCertificate(ctx, secret, next)
	require.NoError(t, err)
	require.Len(t, pemCerts(t, c.getSecret(t).Data[secretCA]), 2, "the renewed CA and the new one; the first had expired")
}

// TestCertPromotionWaitsForCABundle: a staged certificate is served only
// once the CRD's caBundle held its CA when a sync began; if the caBundle
// lost it meanwhile (the CRD replaced), that sync writes it back and the
// next one promotes.
func TestCertPromotionWaitsForCABundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := issuedAt(t, time.Now().Add(-certValidity+certRenewBefore-24*time.Hour))
	c := newCertCluster(t, webhookSecret(old))
	serving := &servingCert{}
	m := c.manager(serving, true)
	require.NoError(t, m.sync(ctx))
	require.NotEmpty(t, c.getSecret(t).Data[secretNextCert], "staged")

	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	require.NoError(t, c.client.Get(ctx, types.NamespacedName{Name: c.crd}, crd))
	require.NoError(t, unstructured.SetNestedField(crd.Object, base64.StdEncoding.EncodeToString(old.CA), "spec", "conversion", "webhook", "clientConfig", "caBundle"))
	require.NoError(t, c.client.Update(ctx, crd))

	require.NoError(t, m.sync(ctx))
	require.Equal(t, old.Cert, c.getSecret(t).Data[secretCert], "not promoted while the caBundle was just written back")
	c.requireTrusted(t, serving, time.Now())
	require.NoError(t, m.sync(ctx))
	require.Empty(t, c.getSecret(t).Data[secretNextCert], "promoted")
	require.NotEqual(t, old.Cert, certPEM(t, serving))
	c.requireTrusted(t, serving, time.Now())
}

// TestExpiredCertReplaced: a Secret whose certificate has already expired
// (a cluster switched off for a year) is replaced in one sync, and the
// replica is ready again.
func TestExpiredCertReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCertCluster(t, webhookSecret(issuedAt(t, time.Now().Add(-certValidity-time.Hour))))
	serving := &servingCert{}
	require.NoError(t, c.manager(serving, false).sync(ctx))
	require.ErrorContains(t, serving.ready(time.Now()), "expired at", "a standby serves what the Secret holds")
	require.NoError(t, c.manager(serving, true).sync(ctx))
	require.NoError(t, serving.ready(time.Now()))
	c.requireTrusted(t, serving, time.Now())
	require.Len(t, pemCerts(t, c.getSecret(t).Data[secretCA]), 1)
}

// TestCertSecretCreated: without a Secret the first replica creates one
// with a certificate valid for certValidity, and the leader writes its CA
// into the CRD.
func TestCertSecretCreated(t *testing.T) {
	t.Parallel()
	c := newCertCluster(t, nil)
	serving := &servingCert{}
	require.NoError(t, c.manager(serving, true).sync(context.Background()))
	require.NoError(t, serving.ready(time.Now()))
	c.requireTrusted(t, serving, time.Now())
	c.requireTrusted(t, serving, time.Now().Add(certValidity-certRenewBefore))
}

func certPEM(t *testing.T, s *servingCert) []byte {
	t.Helper()
	c, err := s.get(nil)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]})
}

func pemCerts(t *testing.T, bundle []byte) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		certs = append(certs, c)
	}
	return certs
}

// TestCertSecretVerified: the leader keeps a found Secret whose
// certificate verifies (its key, a chain to ca.crt, every host of
// --conversion-hosts, valid certExpiryMargin ahead) and replaces one that
// does not in a single sync, saying why; a standby never writes it and
// serves what it holds, or nothing when it holds nothing readable.
func TestCertSecretVerified(t *testing.T) {
	t.Parallel()
	now := time.Now()
	good := issuedAt(t, now)
	other := issuedAt(t, now)
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		hosts  []string
		why    string // "" when the Secret is kept
	}{
		{"good", webhookSecret(good), nil, ""},
		{"not chaining to ca.crt", webhookSecret(&webhookCert{CA: other.CA, Cert: good.Cert, Key: good.Key}), nil, `its certificate does not chain to a CA of its \"ca.crt\"`},
		{"a host missing", webhookSecret(good), []string{"127.0.0.1", "airunway-status-reporter.moved.svc"}, `its certificate is not for host \"airunway-status-reporter.moved.svc\" of --conversion-hosts`},
		{"expiring within the margin", webhookSecret(issuedAt(t, now.Add(-certValidity+certExpiryMargin/2))), nil, "the conversion webhook's certificate expires at"},
		{"expired", webhookSecret(issuedAt(t, now.Add(-certValidity-time.Hour))), nil, "the conversion webhook's certificate expired at"},
		{"a key of another certificate", webhookSecret(&webhookCert{CA: good.CA, Cert: good.Cert, Key: other.Key}), nil, `its \"tls.crt\" and \"tls.key\" are not a certificate and its key`},
		{"garbage", webhookSecret(&webhookCert{CA: []byte("x"), Cert: []byte("x"), Key: []byte("x")}), nil, `its \"tls.crt\" and \"tls.key\" are not a certificate and its key`},
		{"empty", func() *corev1.Secret { s := webhookSecret(good); s.Data = nil; return s }(), nil, `it has no \"ca.crt\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := newCertCluster(t, tc.secret)
			hosts := tc.hosts
			if hosts == nil {
				hosts = []string{"127.0.0.1"}
			}
			var logs strings.Builder
			log := funcr.New(func(prefix, args string) { logs.WriteString(args + "\n") }, funcr.Options{})
			replica := func(serving *servingCert, leader bool) *certManager {
				m := c.manager(serving, leader)
				m.hosts, m.log = hosts, log
				return m
			}
			before := c.getSecret(t)

			standby := &servingCert{}
			err := replica(standby, false).sync(ctx)
			require.Equal(t, before.ResourceVersion, c.getSecret(t).ResourceVersion, "a standby never writes the Secret")
			if err != nil {
				require.ErrorContains(t, err, "holds no certificate to serve, until the leader replaces it")
			} else {
				require.Equal(t, tc.secret.Data[secretCert], certPEM(t, standby), "a standby serves what the Secret holds")
			}

			leader := &servingCert{}
			require.NoError(t, replica(leader, true).sync(ctx))
			after := c.getSecret(t)
			if tc.why == "" {
				require.Equal(t, before.ResourceVersion, after.ResourceVersion, "a good Secret is kept")
				require.Equal(t, good.Cert, certPEM(t, leader))
				require.NotContains(t, logs.String(), "reissued")
			} else {
				require.NotEqual(t, before.Data[secretCert], after.Data[secretCert], "replaced")
				require.Empty(t, after.Data[secretNextCert], "replaced at once, not staged")
				require.Equal(t, after.Data[secretCert], certPEM(t, leader))
				require.Contains(t, logs.String(), `"msg"="reissued the conversion webhook's certificate"`)
				require.Contains(t, logs.String(), tc.why)
			}
			require.NoError(t, verifyServed(after, hosts, now))
			require.NoError(t, leader.ready(now))
			for _, h := range hosts {
				cert, err := leader.get(nil)
				require.NoError(t, err)
				_, err = cert.Leaf.Verify(x509.VerifyOptions{Roots: c.caBundle(t), DNSName: h, CurrentTime: now})
				require.NoError(t, err, "the API server trusts it for %q", h)
			}
			require.NoError(t, replica(standby, false).sync(ctx))
			require.Equal(t, after.Data[secretCert], certPEM(t, standby), "a standby serves the reissued certificate at its next read")
		})
	}
}

// TestCertSecretCreateRace: two replicas that both find no Secret both
// issue a certificate; the one whose create loses reads and serves the
// winner's.
func TestCertSecretCreateRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCertCluster(t, nil)
	winner := &servingCert{}
	require.NoError(t, c.manager(winner, false).sync(ctx))
	// The loser read before the winner created it.
	loser := staleReader{Reader: c.client, missing: c.secret}
	secret, err := ensureCertSecret(ctx, &loser, c.client, c.secret, []string{"127.0.0.1"})
	require.NoError(t, err)
	require.Equal(t, certPEM(t, winner), secret.Data[secretCert])
	require.Equal(t, 1, loser.missed)
}

// staleReader finds no missing object on its first read, as if it read
// before another replica created it.
type staleReader struct {
	client.Reader
	missing types.NamespacedName
	missed  int
}

func (r *staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == r.missing && r.missed == 0 {
		r.missed++
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
