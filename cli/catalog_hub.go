package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/safefile"
)

// `catalog add --from-hub`: the only network access of airunway-render.
// It asks the Hub (HF_ENDPOINT, default https://huggingface.co) for these
// things of one model, and nothing else:
//
//	GET  {endpoint}/api/models/{id}                         whether it is gated
//	GET  {endpoint}/{id}/resolve/{revision}/config.json
//	GET  {endpoint}/{id}/resolve/{revision}/model.safetensors.index.json
//	HEAD {endpoint}/{id}/resolve/{revision}/model.safetensors   only without an index: its size
//	GET  {endpoint}/{id}/resolve/{revision}/hf_quant_config.json  only when config.json names no quantization
//
// Each response body is read up to 8 MiB (a larger one is refused, not
// cut); redirects are followed on the endpoint's own host (the Hub sends
// renamed repositories and cached files there), at most five, and refused
// to any other host: the Hub's CDN serves only the weights, which are
// never downloaded (the size of model.safetensors comes from the HEAD
// response's X-Linked-Size, which the Hub sets on the redirect itself).
// The token goes to the endpoint's host only, and the whole fetch ends
// after --timeout.

const (
	defaultHubEndpoint = "https://huggingface.co"
	maxHubRedirects    = 5
	maxTokenFileBytes  = 4 << 10
	// maxHubErrorText bounds what of the Hub's X-Error-Message a message
	// quotes.
	maxHubErrorText = 200
)

// hubIDRe is a Hugging Face repository id: a name, or owner/name, of
// letters, digits, '.', '_' and '-', starting with a letter or digit.
var hubIDRe = regexp.MustCompile(`^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

// commitRe is a full Git commit id, as the Hub's X-Repo-Commit gives it.
var commitRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// hubClient asks one Hub endpoint about one model.
type hubClient struct {
	endpoint *url.URL
	token    string
	client   *http.Client
}

// hubRow reads a model's facts from the Hub.
func hubRow(cmd *cobra.Command, id string, o catalogAddOptions) (hub.CatalogModel, error) {
	if !hubIDRe.MatchString(id) || strings.Contains(id, "..") {
		return hub.CatalogModel{}, fmt.Errorf("%q is not a Hugging Face model id: owner/name, of letters, digits, '.', '_' and '-' (at most 96 each)", id)
	}
	if err := checkRevision(o.revision); err != nil {
		return hub.CatalogModel{}, err
	}
	endpoint, err := hubEndpoint(os.Getenv("HF_ENDPOINT"))
	if err != nil {
		return hub.CatalogModel{}, err
	}
	token, err := hubToken(o.tokenFile, os.Getenv("HF_TOKEN"))
	if err != nil {
		return hub.CatalogModel{}, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	h := newHubClient(endpoint, token)
	row, err := h.row(ctx, id, o.revision)
	if errors.Is(err, context.DeadlineExceeded) {
		return hub.CatalogModel{}, fmt.Errorf("%s: no answer within --timeout %s", endpoint.Host, o.timeout)
	}
	return row, err
}

// checkRevision accepts a branch, tag or commit: it is one segment of the
// URL, escaped, so it cannot lead elsewhere on the Hub.
func checkRevision(rev string) error {
	switch {
	case rev == "" || rev == "." || rev == "..":
		return usagef("`--revision` must name a branch, tag or commit, got %q", rev)
	case len(rev) > 256 || strings.ContainsFunc(rev, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return usagef("`--revision` %q must be at most 256 characters, without whitespace or control characters", rev)
	}
	return nil
}

// hubEndpoint is HF_ENDPOINT, or the Hub: an https URL, or http on a
// loopback address (a mirror on the machine itself, a test), without
// credentials, query or fragment.
func hubEndpoint(env string) (*url.URL, error) {
	if env == "" {
		env = defaultHubEndpoint
	}
	u, err := url.Parse(env)
	bad := func(why string) error {
		return fmt.Errorf("HF_ENDPOINT %q: %s; it must be an https:// URL (http:// only on a loopback address), such as %s", env, why, defaultHubEndpoint)
	}
	switch {
	case err != nil:
		return nil, bad(err.Error())
	case u.Host == "" || u.Opaque != "":
		return nil, bad("no host")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, bad("credentials, a query or a fragment are not allowed")
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return nil, bad("the token and the model's facts would travel unencrypted")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hubToken is the token of --token-file, else HF_TOKEN, else none: one
// line of printable ASCII without spaces, which is what a header can
// carry.
func hubToken(file, env string) (string, error) {
	token, from := env, "HF_TOKEN"
	if file != "" {
		data, err := safefile.ReadFileAtMost(file, maxTokenFileBytes)
		if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
			return "", fmt.Errorf("--token-file %s: larger than %d KiB, not a token", file, maxTokenFileBytes>>10)
		}
		if err != nil {
			return "", fmt.Errorf("--token-file: %v", err)
		}
		token, from = string(data), "--token-file "+file
		if strings.TrimSpace(token) == "" {
			return "", fmt.Errorf("%s is empty", from)
		}
	}
	token = strings.TrimSpace(token)
	for _, r := range token {
		if r <= ' ' || r > '~' {
			return "", fmt.Errorf("%s: a token is one line of printable ASCII without spaces", from)
		}
	}
	return token, nil
}

func newHubClient(endpoint *url.URL, token string) *hubClient {
	transport := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
	h := &hubClient{endpoint: endpoint, token: token}
	h.client = &http.Client{Transport: transport, CheckRedirect: h.checkRedirect}
	return h
}

// errOtherHost is a redirect away from the endpoint's host.
type errOtherHost struct{ to *url.URL }

func (e errOtherHost) Error() string {
	return fmt.Sprintf("redirected to another host (%s): refused; catalog add reads from the Hub's endpoint only (a file the Hub keeps in Git LFS or Xet storage is served from its CDN: download the model's files and use --model-dir)", e.to.Host)
}

// checkRedirect follows a redirect on the endpoint's own scheme and host;
// a HEAD request stops at a redirect elsewhere and reads its headers (the
// Hub answers a checkpoint's HEAD with a redirect to its CDN that carries
// the size); any other request refuses it.
func (h *hubClient) checkRedirect(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != h.endpoint.Scheme || req.URL.Host != h.endpoint.Host {
		if req.Method == http.MethodHead {
			return http.ErrUseLastResponse
		}
		return errOtherHost{req.URL}
	}
	if len(via) >= maxHubRedirects {
		return fmt.Errorf("more than %d redirects", maxHubRedirects)
	}
	return nil
}

// url is the endpoint's URL of path, whose segments are escaped.
func (h *hubClient) url(segments ...string) string {
	u := *h.endpoint
	var raw strings.Builder
	raw.WriteString(u.EscapedPath())
	var plain strings.Builder
	plain.WriteString(u.Path)
	for _, s := range segments {
		raw.WriteString("/" + url.PathEscape(s))
		plain.WriteString("/" + s)
	}
	u.Path, u.RawPath = plain.String(), raw.String()
	return u.String()
}

// row asks the Hub for the model's facts.
func (h *hubClient) row(ctx context.Context, id, revision string) (hub.CatalogModel, error) {
	idSegments := strings.Split(id, "/")
	gated, err := h.gated(ctx, id, idSegments)
	if err != nil {
		return hub.CatalogModel{}, err
	}
	file := func(name string) []string {
		return append(append(append([]string(nil), idSegments...), "resolve", revision), name)
	}
	cfg, commit, err := h.get(ctx, id, configFile, file(configFile))
	if err != nil {
		return hub.CatalogModel{}, err
	}
	if cfg == nil {
		return hub.CatalogModel{}, fmt.Errorf("%s has no %s at revision %q on %s (404 Not Found): is this a transformers model?", id, configFile, revision, h.endpoint.Host)
	}
	parts := []string{fmt.Sprintf("%s (sha256:%s)", configFile, sha256Hex(cfg))}
	idx, _, err := h.get(ctx, id, indexFile, file(indexFile))
	if err != nil {
		return hub.CatalogModel{}, err
	}
	var single int64
	if idx != nil {
		parts = append(parts, fmt.Sprintf("%s (sha256:%s)", indexFile, sha256Hex(idx)))
	} else {
		if single, err = h.size(ctx, id, singleCheckpt, file(singleCheckpt)); err != nil {
			return hub.CatalogModel{}, err
		}
		if single > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d bytes)", singleCheckpt, single))
		}
	}
	m, err := fit.FromConfig(id, cfg, idx)
	if err != nil {
		return hub.CatalogModel{}, fmt.Errorf("%s of %s at revision %q: %v", configFile, id, revision, err)
	}
	if idx == nil && single > 0 {
		m.WeightBytes = single
	}
	if m.Quantization == nil {
		// As vLLM does: ModelOpt's precision, when config.json names none.
		quant, _, err := h.get(ctx, id, quantFile, file(quantFile))
		if err != nil {
			return hub.CatalogModel{}, err
		}
		if quant != nil {
			if err := fit.WithQuantConfig(&m, quant); err != nil {
				return hub.CatalogModel{}, fmt.Errorf("%s of %s at revision %q: %v", quantFile, id, revision, err)
			}
			parts = append(parts, fmt.Sprintf("%s (sha256:%s)", quantFile, sha256Hex(quant)))
		}
	}
	m.Gated = gated
	at := fmt.Sprintf("revision %s", revision)
	if commit != "" && commit != revision {
		at += " (commit " + commit + ")"
	}
	source := fmt.Sprintf("%s of %s at %s on %s", strings.Join(parts, ", "), id, at, h.endpoint.Redacted())
	if gated != nil {
		source += fmt.Sprintf("; gated: %t", *gated)
	}
	return hub.CatalogModel{Model: m, Source: source}, nil
}

// gated asks the Hub's API whether the model is gated: its "gated" is
// false, "auto" or "manual" (either: a token of a user who accepted the
// model's conditions is needed to download it). Nil when it does not say.
func (h *hubClient) gated(ctx context.Context, id string, idSegments []string) (*bool, error) {
	body, _, err := h.get(ctx, id, "the model's information", append([]string{"api", "models"}, idSegments...))
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, fmt.Errorf("the Hub (%s) has no model %s (404 Not Found); check the id, or give a token if it is private", h.endpoint.Host, id)
	}
	var info struct {
		Gated json.RawMessage `json:"gated"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("the model's information from %s is not JSON: %v", h.endpoint.Host, err)
	}
	var b bool
	var s string
	switch {
	case len(info.Gated) == 0 || string(info.Gated) == "null":
		return nil, nil
	case json.Unmarshal(info.Gated, &b) == nil:
		return &b, nil
	case json.Unmarshal(info.Gated, &s) == nil && (s == "auto" || s == "manual"):
		t := true
		return &t, nil
	}
	return nil, fmt.Errorf("the model's information from %s says gated %s: expected false, \"auto\" or \"manual\"", h.endpoint.Host, info.Gated)
}

// get fetches one document: its body (nil when the Hub has none: 404) and
// the commit the Hub resolved the revision to, when it says.
func (h *hubClient) get(ctx context.Context, id, what string, segments []string) ([]byte, string, error) {
	resp, err := h.do(ctx, http.MethodGet, segments)
	if err != nil {
		return nil, "", h.failed(id, what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, "", nil
	}
	if err := h.status(resp, id, what); err != nil {
		return nil, "", err
	}
	if resp.ContentLength > maxModelFileLen {
		return nil, "", h.tooLarge(what, resp.ContentLength)
	}
	body, err := safefile.ReadAtMost(resp.Body, maxModelFileLen)
	if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
		return nil, "", h.tooLarge(what, maxModelFileLen+1)
	}
	if err != nil {
		return nil, "", h.failed(id, what, err)
	}
	commit := resp.Header.Get("X-Repo-Commit")
	if !commitRe.MatchString(commit) {
		commit = ""
	}
	return body, commit, nil
}

// size asks for a file's size without downloading it: X-Linked-Size (a
// file in Git LFS or Xet storage, on the redirect to the CDN), else
// Content-Length; 0 when the Hub has no such file.
func (h *hubClient) size(ctx context.Context, id, what string, segments []string) (int64, error) {
	resp, err := h.do(ctx, http.MethodHead, segments)
	if err != nil {
		return 0, h.failed(id, what, err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0, nil
	}
	if resp.StatusCode/100 != 3 {
		if err := h.status(resp, id, what); err != nil {
			return 0, err
		}
	}
	for _, header := range []string{"X-Linked-Size", "Content-Length"} {
		v := resp.Header.Get(header)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n >= 1<<50 {
			return 0, fmt.Errorf("%s of %s: the Hub's %s %q is not a size", what, id, header, v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s of %s: the Hub gave no size (X-Linked-Size or Content-Length)", what, id)
}

func (h *hubClient) do(ctx context.Context, method string, segments []string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.url(segments...), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "airunway-render (catalog add)")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	return h.client.Do(req)
}

// status says what an unsuccessful answer means for the user.
func (h *hubClient) status(resp *http.Response, id, what string) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	said := ""
	if m := resp.Header.Get("X-Error-Message"); m != "" {
		if len(m) > maxHubErrorText {
			m = m[:maxHubErrorText] + "…"
		}
		said = fmt.Sprintf(" (the Hub says: %q)", m)
	}
	page := h.endpoint.JoinPath(strings.Split(id, "/")...).Redacted()
	switch {
	case resp.StatusCode == http.StatusUnauthorized && h.token == "":
		return fmt.Errorf("%s of %s: %s answered 401 Unauthorized without a token%s: the model is gated or private; accept its conditions at %s and give a token with --token-file FILE or HF_TOKEN", what, id, h.endpoint.Host, said, page)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s of %s: %s refused the token (401 Unauthorized)%s: check that it is valid (huggingface.co/settings/tokens)", what, id, h.endpoint.Host, said)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s of %s: %s answered 403 Forbidden%s: the token's user has no access; accept the model's conditions at %s, or use a token that may read it", what, id, h.endpoint.Host, said, page)
	}
	return fmt.Errorf("%s of %s: %s answered %s%s", what, id, h.endpoint.Host, resp.Status, said)
}

func (h *hubClient) tooLarge(what string, n int64) error {
	return fmt.Errorf("%s from %s is %d bytes, more than %d MiB: refused (not a model's configuration)", what, h.endpoint.Host, n, maxModelFileLen>>20)
}

// failed says why a request got no answer; a redirect to another host
// says so itself.
func (h *hubClient) failed(id, what string, err error) error {
	var other errOtherHost
	if errors.As(err, &other) {
		return fmt.Errorf("%s of %s: %v", what, id, other)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s of %s: cannot reach %s: %v", what, id, h.endpoint.Host, err)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
