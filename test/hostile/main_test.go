package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// renderBin is the airunway-render binary `make build` made
// (AIRUNWAY_RENDER_BIN), or one built here once, so that a plain
// `go test ./...` runs a real binary too.
func renderBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AIRUNWAY_RENDER_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		require.NoError(t, err)
		require.FileExists(t, abs, "AIRUNWAY_RENDER_BIN")
		return abs
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airunway-hostile-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "airunway-render")
		cmd := exec.Command("go", "build", "-trimpath", "-o", built, "./cmd/airunway-render")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		_ = os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}
