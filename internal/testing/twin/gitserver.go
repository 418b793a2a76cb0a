package twin

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GitServer serves the bare repositories under a directory over Git's
// smart HTTP protocol on 127.0.0.1, read-only, through `git http-backend`:
// Argo CD's repo-server and Flux's source-controller clone from it as from
// any Git host (neither reads file:// repositories).
type GitServer struct {
	// URL is the server's base: URL + "/NAME.git" clones NAME.git.
	URL    string
	dir    string
	server *http.Server
}

// StartGitServer serves dir (which holds NAME.git bare repositories).
func StartGitServer(dir string) (*GitServer, error) {
	backend, err := gitHTTPBackend()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + dir,
			// Serve every repository under dir without a
			// git-daemon-export-ok file in each.
			"GIT_HTTP_EXPORT_ALL=1",
		},
	}
	readOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
			http.Error(w, "read-only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	s := &GitServer{URL: "http://" + l.Addr().String(), dir: dir, server: &http.Server{Handler: readOnly}}
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Close stops the server.
func (s *GitServer) Close() error { return s.server.Close() }

// gitHTTPBackend finds git's http-backend program.
func gitHTTPBackend() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("git --exec-path: %w (is git installed?)", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("git http-backend: %w", err)
	}
	return p, nil
}
