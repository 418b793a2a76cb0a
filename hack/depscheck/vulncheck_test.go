package depscheck

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeModule is the module the test advisories name: one the render binary
// links, whose only package has the module's own path.
const fakeModule = "github.com/spf13/pflag"

// TestVulncheckScript runs hack/vulncheck.sh in binary mode against
// vulnerability databases it writes itself (the public one is not reachable
// from every machine), so what it proves holds offline: the pinned
// govulncheck builds, GOVULNDB=file://... is used, a vulnerable module
// version fails with 3, a fixed one passes, and an unreachable database
// exits 4. The first run builds govulncheck into TOOLS_DIR (a minute or
// more, from the Go module proxy); later runs reuse it.
func TestVulncheckScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds govulncheck on first use; run without -short")
	}
	root := repoRoot(t)
	bin := os.Getenv("AIRUNWAY_RENDER_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "airunway-render")
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/airunway-render")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/airunway-render: %v\n%s", err, out)
		}
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, d := range info.Deps {
		if d.Path == fakeModule {
			version = d.Version
		}
	}
	if version == "" {
		t.Fatalf("%s does not link %s any more: make fakeModule another module it links", bin, fakeModule)
	}
	next, err := nextPatch(version)
	if err != nil {
		t.Fatal(err)
	}

	// run runs the script on bin with GOVULNDB=db; it returns the exit
	// status and the combined output.
	run := func(t *testing.T, db string) (int, string) {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(root, "hack", "vulncheck.sh"), bin)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOVULNDB="+db, "VULNCHECK_SOURCE=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, out.String()
		case errors.As(err, &exit):
			return exit.ExitCode(), out.String()
		default:
			t.Fatalf("hack/vulncheck.sh: %v\n%s", err, out.String())
			return -1, ""
		}
	}

	t.Run("vulnerable version is reported", func(t *testing.T) {
		db := writeDB(t, fakeModule, next)
		code, out := run(t, "file://"+db)
		if code != 3 || !strings.Contains(out, "GO-0000-0001") || !strings.Contains(out, fakeModule+"@"+version) {
			t.Fatalf("exit %d, want 3 and GO-0000-0001 in %s@%s reported:\n%s", code, fakeModule, version, out)
		}
	})
	t.Run("fixed version passes", func(t *testing.T) {
		db := writeDB(t, fakeModule, strings.TrimPrefix(version, "v"))
		if code, out := run(t, "file://"+db); code != 0 {
			t.Fatalf("exit %d, want 0: the advisory is fixed in %s, the version linked:\n%s", code, version, out)
		}
	})
	t.Run("unreachable database exits 4", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		code, out := run(t, "http://"+addr)
		if code != 4 || !strings.Contains(out, "UNREACHABLE") {
			t.Fatalf("exit %d, want 4 and UNREACHABLE:\n%s", code, out)
		}
	})
	t.Run("missing local database is an error", func(t *testing.T) {
		code, out := run(t, "file://"+filepath.Join(t.TempDir(), "none"))
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
	})
}

// writeDB writes a vulnerability database in the layout govulncheck reads
// (https://go.dev/security/vuln/database#api: index/db.json,
// index/modules.json, ID/<id>.json) with one FAKE advisory, GO-0000-0001:
// every version of module before fixed (no "v") is vulnerable in the
// package with the module's path.
func writeDB(t *testing.T, module, fixed string) string {
	t.Helper()
	dir := t.TempDir()
	const id, when = "GO-0000-0001", "2026-01-01T00:00:00Z"
	files := map[string]any{
		"index/db.json": map[string]any{"modified": when},
		"index/modules.json": []any{map[string]any{
			"path":  module,
			"vulns": []any{map[string]any{"id": id, "modified": when, "fixed": fixed}},
		}},
		"ID/" + id + ".json": map[string]any{
			"schema_version":    "1.3.1",
			"id":                id,
			"modified":          when,
			"published":         when,
			"summary":           "FAKE advisory written by hack/depscheck to test hack/vulncheck.sh",
			"details":           "Not a real vulnerability.",
			"database_specific": map[string]any{"url": "https://example.invalid/" + id},
			"affected": []any{map[string]any{
				"package": map[string]any{"name": module, "ecosystem": "Go"},
				"ranges": []any{map[string]any{
					"type":   "SEMVER",
					"events": []any{map[string]any{"introduced": "0"}, map[string]any{"fixed": fixed}},
				}},
				"ecosystem_specific": map[string]any{"imports": []any{map[string]any{"path": module}}},
			}},
		},
	}
	for name, v := range files {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nextPatch returns the release after vX.Y.Z, without the "v": X.Y.(Z+1).
func nextPatch(v string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("%q is not a vX.Y.Z release", v)
	}
	z, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", fmt.Errorf("%q is not a vX.Y.Z release", v)
	}
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], z+1), nil
}
