// Command airunway-render renders AI Runway ModelDeployments into provider
// objects, as a KRM function (no arguments) or as a CLI; see package fn.
package main

import (
	"os"

	"github.com/airunway-render/airunway-render/fn"
)

func main() {
	os.Exit(fn.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
