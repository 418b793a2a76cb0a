package hostile

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestModelCatalogNeverDials: with a ModelCatalog in the repository, and
// the environment `catalog add --from-hub` reads (HF_ENDPOINT, HF_TOKEN)
// and every proxy variable pointing at listeners on 127.0.0.1, no entry
// point connects anywhere: a request to the Hub's endpoint, or through a
// proxy to any other host, would reach one of them. Only catalog add
// --from-hub talks to the Hub (docs/security.md).
func TestModelCatalogNeverDials(t *testing.T) {
	bin := renderBin(t)
	dir := filepath.Join(cases, "model-catalog-names-the-hub")
	data, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	require.NoError(t, err)
	var c hostileCase
	require.NoError(t, sigsyaml.UnmarshalStrict(data, &c))
	c.App = "app"

	var dials atomic.Int32
	listen := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				dials.Add(1)
				conn.Close()
			}
		}()
		return "http://" + ln.Addr().String()
	}
	hub, proxy := listen(), listen()
	for _, entry := range entryPoints {
		t.Run(entry, func(t *testing.T) {
			s := newSandbox(t, filepath.Join(dir, "repo"), c)
			s.env = []string{"HF_ENDPOINT=" + hub, "HF_TOKEN=hf_never_sent", "HF_HUB_OFFLINE=0",
				"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "ALL_PROXY=" + proxy, "https_proxy=" + proxy, "http_proxy=" + proxy}
			res := s.run(t, bin, entry, c)
			s.check(t, entry, c, res)
			require.NotContains(t, res.stdout+res.stderr, "hf_never_sent")
		})
	}
	require.Zero(t, dials.Load(), "an entry point connected to the Hub's endpoint or a proxy")

	// The control: catalog add --from-hub, asked to, does reach the
	// endpoint (which hangs up, so it fails).
	cmd := exec.Command(bin, "catalog", "add", "my-org/house-model", "--from-hub")
	cmd.Env = []string{"HF_ENDPOINT=" + hub, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "cannot reach 127.0.0.1:")
	require.Positive(t, dials.Load(), "the listener saw no connection: it proves nothing")
}
