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
		os.Exit(fn.Run(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
