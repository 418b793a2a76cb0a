package kbuild

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"sigs.k8s.io/kustomize/api/resource"
)

// notRemote refuses a kustomization entry kustomize would fetch: a Git
// repository, which it clones with the git program, or an HTTP(S) file.
// The repository test is kustomize's own parser of repository URLs
// (reached through resource.Origin, which records a repository as the
// loader does), so every spelling it accepts — github.com/org/repo,
// user@host:org/repo, ssh://, file://, any case — is refused here, before
// anything is fetched.
func notRemote(file, field string, i int, entry string) error {
	if !isRemote(entry) {
		return nil
	}
	return fmt.Errorf("%s: `%s[%d]` is %q, a remote reference; a kustomization built here may only read files in the repository, and a build fetches nothing", file, field, i, entry)
}

func isRemote(entry string) bool {
	if (&resource.Origin{}).Append(entry).Repo != "" {
		return true
	}
	u, err := url.Parse(entry)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// errNoNetwork is what kustomize's loader gets when it fetches a URL.
var errNoNetwork = errors.New("a build fetches nothing from the network")

// refusingTransport refuses every request before anything is dialled or
// looked up.
type refusingTransport struct{}

func (refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%w: a kustomization asked for %q; it may only read files in the repository", errNoNetwork, r.URL.Redacted())
}

// networkMu makes builds take turns at replacing the default transport.
var networkMu sync.Mutex

// withoutNetwork runs build with HTTP through the default transport failing
// at once. kustomize's loader fetches a remote file with an http.Client of
// its own that uses the default transport, and no option turns that off;
// the check refuses the references it knows, and this refuses every other
// field that names a file (a patch, a generator's source, an OpenAPI
// schema), whatever its spelling. The transport is put back afterwards: the
// renderer makes no HTTP request during a build, and other commands in the
// same process (discover, in tests) keep theirs.
func withoutNetwork(build func() error) error {
	networkMu.Lock()
	defer networkMu.Unlock()
	saved := http.DefaultTransport
	http.DefaultTransport = refusingTransport{}
	defer func() { http.DefaultTransport = saved }()
	return build()
}
