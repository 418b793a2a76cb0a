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
	// kustomize starts the function without arguments, or with `migrate`
	// (plan --fleet's overlay builds); go test always passes some, to the
	// tests and to fuzzing workers alike, which inherit the variable.
	if os.Getenv(asFunction) == "1" {
		switch {
		case len(os.Args) == 1:
			os.Exit(fn.Run(os.Stdin, os.Stdout, os.Stderr))
		case len(os.Args) == 2 && os.Args[1] == "migrate":
			// As the binary runs `airunway-render migrate` without PATHs.
			os.Exit(fn.RunMigrate(os.Stdin, os.Stdout, os.Stderr, ""))
		}
	}
	// Every build a test runs (build, the Argo CD plugin, the overlays
	// plan, diff and preview build) executes this binary as its function.
	if err := os.Setenv(asFunction, "1"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
