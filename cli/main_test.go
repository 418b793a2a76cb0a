package cli

import (
	"os"
	"testing"

	"github.com/airunway-render/airunway-render/fn"
)

// asFunction makes this test binary the KRM function: build runs the test
// binary (functionExecutable is os.Executable), and kustomize passes the
// environment on.
const asFunction = "CLI_TEST_AS_FUNCTION"

func TestMain(m *testing.M) {
	if os.Getenv(asFunction) == "1" {
		if len(os.Args) == 2 && os.Args[1] == "migrate" {
			// As the binary runs `airunway-render migrate` without PATHs.
			os.Exit(fn.RunMigrate(os.Stdin, os.Stdout, os.Stderr, ""))
		}
		os.Exit(fn.Run(os.Stdin, os.Stdout, os.Stderr))
	}
	// Every build a test runs (build, the Argo CD plugin, the overlays
	// plan, diff and preview build) executes this binary as its function.
	if err := os.Setenv(asFunction, "1"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
