// Package golden holds the renderer's golden cases: one directory per case
// under golden/testdata, each an input and the exact expected output of the
// KRM function, reviewed as plain YAML in pull requests.
//
// A case directory holds:
//
//	*.yaml           input items, read in name order (each item remembers its
//	                 file, as kpt passes it)
//	functionConfig/  optional; its single YAML file becomes the functionConfig
//	expected.yaml    the ResourceList the function writes on stdout
//	expected.stderr  what it prints on stderr (problems; empty when none)
//	expected.exit    the exit code when it is not 0
//
// Regenerate after an intended change with `make golden`
// (`go test ./golden/ -run TestGolden -update`) and review the diff.
package golden
