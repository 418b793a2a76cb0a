package manifest

// The parity suite: every reader and writer of this package held to the
// library it stands in for, at the version go.mod requires. A failure
// names that version: a dependency bump that changes how the library reads
// or writes fails here, saying which library moved, and the package must
// follow it (or the bump wait).

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// The libraries the suite holds the package to, by module path.
const (
	kyamlModule = "sigs.k8s.io/kustomize/kyaml"
	sdkModule   = "github.com/kptdev/krm-functions-sdk/go/fn"
)

// pinned reads the versions go.mod requires of the reference libraries
// (a test binary carries no module versions of its dependencies).
var pinned = sync.OnceValues(func() (map[string]string, error) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	block := "" // the directive of the block the line is in, if any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		code, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(code)
		directive := block
		switch {
		case len(fields) == 0:
			continue
		case len(fields) == 2 && fields[1] == "(":
			block = fields[0]
			continue
		case fields[0] == ")":
			block = ""
			continue
		case block == "":
			directive, fields = fields[0], fields[1:]
		}
		for _, module := range []string{kyamlModule, sdkModule} {
			switch {
			case len(fields) < 2 || fields[0] != module:
			case directive == "replace":
				return nil, fmt.Errorf("go.mod replaces %s: the suite holds the package to a released version", module)
			case directive == "require":
				versions[module] = fields[1]
			}
		}
	}
	return versions, sc.Err()
})

// library names a reference as "kyaml v0.21.2's kio.ByteReader", for
// failure messages.
func library(tb testing.TB, module, api string) string {
	tb.Helper()
	versions, err := pinned()
	if err != nil {
		tb.Fatal(err)
	}
	name := map[string]string{kyamlModule: "kyaml", sdkModule: "the KRM functions SDK"}[module]
	return fmt.Sprintf("%s %s's %s", name, versions[module], api)
}

// TestPinnedLibraries: go.mod requires each reference library, unreplaced;
// the suite's messages name the versions it requires.
func TestPinnedLibraries(t *testing.T) {
	versions, err := pinned()
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{kyamlModule, sdkModule} {
		if versions[module] == "" {
			t.Errorf("go.mod does not require %s: the parity suite has no reference", module)
		}
		t.Logf("held to %s %s", module, versions[module])
	}
}

// seedFiles are every YAML file of the golden cases and the examples.
func seedFiles(tb testing.TB) [][]byte {
	var files []string
	for _, pattern := range []string{"../../golden/testdata/*/*.yaml", "../../golden/testdata/*/*/*.yaml", "../../examples/*/*.yaml", "../../examples/*/*/*.yaml", "../../examples/*/*/*/*.yaml"} {
		more, _ := filepath.Glob(pattern)
		files = append(files, more...)
	}
	var seeds [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// corpusSeeds are the checked-in inputs of every fuzz target of the
// module: hostile inputs, alias bombs, odd tags and separators.
func corpusSeeds(tb testing.TB) [][]byte {
	return fuzzcheck.CorpusInputs(tb, "../../*/testdata/fuzz/Fuzz*/*", "../../api/*/testdata/fuzz/Fuzz*/*", "../*/testdata/fuzz/Fuzz*/*")
}
