package depscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// binaries are the commands the project ships (Makefile: make build).
var binaries = []string{"airunway-render", "airunway-status-reporter"}

type requirement struct {
	Path, Version string
	Indirect      bool
}

// repoRoot is the directory holding go.mod and DEPENDENCIES.md.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository root: %v", err)
	}
	return root
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseRequires reads the require directives of a go.mod file, single-line
// and blocks. It knows only as much of the grammar as go.mod files written
// by the go command use; anything else in a require block is an error.
func parseRequires(data []byte) ([]requirement, error) {
	var reqs []requirement
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		code, comment, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(code)
		if inBlock {
			switch {
			case len(fields) == 0:
				continue
			case len(fields) == 1 && fields[0] == ")":
				inBlock = false
				continue
			case len(fields) != 2:
				return nil, fmt.Errorf("go.mod:%d: unexpected line in require block: %q", n, sc.Text())
			}
		} else {
			if len(fields) == 0 || fields[0] != "require" {
				continue
			}
			if len(fields) == 2 && fields[1] == "(" {
				inBlock = true
				continue
			}
			if len(fields) != 3 {
				return nil, fmt.Errorf("go.mod:%d: unexpected require line: %q", n, sc.Text())
			}
			fields = fields[1:]
		}
		path := fields[0]
		if strings.HasPrefix(path, `"`) {
			p, err := strconv.Unquote(path)
			if err != nil {
				return nil, fmt.Errorf("go.mod:%d: %v", n, err)
			}
			path = p
		}
		c := strings.TrimSpace(comment)
		indirect := c == "indirect" || strings.HasPrefix(c, "indirect;")
		reqs = append(reqs, requirement{Path: path, Version: fields[1], Indirect: indirect})
	}
	if inBlock {
		return nil, fmt.Errorf("go.mod: unterminated require block")
	}
	return reqs, sc.Err()
}

func directRequires(t *testing.T) map[string]string {
	t.Helper()
	reqs, err := parseRequires(readFile(t, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]string{}
	for _, r := range reqs {
		if !r.Indirect {
			direct[r.Path] = r.Version
		}
	}
	if len(direct) == 0 {
		t.Fatal("go.mod has no direct requirements: the parser is broken")
	}
	return direct
}

// section returns the lines of the "## title" section of a Markdown file.
func section(doc []byte, title string) ([]string, error) {
	var out []string
	in := false
	for line := range strings.Lines(string(doc)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == title
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	if !in && out == nil {
		return nil, fmt.Errorf("DEPENDENCIES.md has no %q section", "## "+title)
	}
	return out, nil
}

var codeCell = regexp.MustCompile("^`([^`]+)`$")

// documentedDirect reads the table of the "Direct dependencies" section:
// rows whose first two cells are `module` and `version`.
func documentedDirect(doc []byte) (map[string]string, error) {
	lines, err := section(doc, "Direct dependencies")
	if err != nil {
		return nil, err
	}
	listed := map[string]string{}
	for _, line := range lines {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		m := codeCell.FindStringSubmatch(strings.TrimSpace(cells[1]))
		v := codeCell.FindStringSubmatch(strings.TrimSpace(cells[2]))
		if m == nil || v == nil {
			continue // header and separator rows
		}
		if _, dup := listed[m[1]]; dup {
			return nil, fmt.Errorf("DEPENDENCIES.md lists %s twice", m[1])
		}
		listed[m[1]] = v[1]
	}
	if len(listed) == 0 {
		return nil, fmt.Errorf("DEPENDENCIES.md: no `module` | `version` rows in the Direct dependencies table")
	}
	return listed, nil
}

var shippedHeading = regexp.MustCompile(`^#### (\S+): (\d+) modules$`)

// documentedShipped reads the "What ships in each binary" section: for each
// binary a heading "#### NAME: N modules" and the fenced block after it,
// one "path version" a line.
func documentedShipped(doc []byte) (map[string][]string, map[string]int, error) {
	lines, err := section(doc, "What ships in each binary")
	if err != nil {
		return nil, nil, err
	}
	mods := map[string][]string{}
	counts, summary := map[string]int{}, map[string]int{}
	for i := 0; i < len(lines); i++ {
		if cells := strings.Split(lines[i], "|"); len(cells) > 3 {
			// The summary row "| `bin/NAME` | N | ..." must agree too.
			if m := codeCell.FindStringSubmatch(strings.TrimSpace(cells[1])); m != nil && strings.HasPrefix(m[1], "bin/") {
				n, err := strconv.Atoi(strings.TrimSpace(cells[2]))
				if err != nil {
					return nil, nil, fmt.Errorf("DEPENDENCIES.md: %q: no module count", lines[i])
				}
				summary[strings.TrimPrefix(m[1], "bin/")] = n
			}
			continue
		}
		h := shippedHeading.FindStringSubmatch(lines[i])
		if h == nil {
			continue
		}
		name := h[1]
		counts[name], _ = strconv.Atoi(h[2])
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
		}
		var list []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			if l := strings.TrimSpace(lines[i]); l != "" {
				list = append(list, l)
			}
		}
		mods[name] = list
	}
	for name, n := range summary {
		if c, ok := counts[name]; ok && c != n {
			return nil, nil, fmt.Errorf("DEPENDENCIES.md: the summary table says bin/%s links %d modules, its list heading %d", name, n, c)
		}
	}
	return mods, counts, nil
}

// linkedModules lists the modules whose packages go into ./cmd/NAME, as
// "path version" sorted: the dep lines `go version -m` shows for the binary
// `make build` makes (CGO_ENABLED=0, as the Makefile exports).
func linkedModules(t *testing.T, name string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps",
		"-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", "./cmd/"+name)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/%s: %v\n%s", name, err, stderr.String())
	}
	var mods []string
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			mods = append(mods, l)
		}
	}
	slices.Sort(mods)
	return slices.Compact(mods)
}

func TestParseRequires(t *testing.T) {
	reqs, err := parseRequires([]byte(`module example.com/m

go 1.26.0

require example.com/single v1.0.0
require "example.com/quoted" v1.1.0 // indirect

require (
	example.com/a v0.1.0
	example.com/b v0.2.0 // indirect
	example.com/c v0.3.0 // indirect; for tests
)

replace (
	example.com/x => ./x
)
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []requirement{
		{"example.com/single", "v1.0.0", false},
		{"example.com/quoted", "v1.1.0", true},
		{"example.com/a", "v0.1.0", false},
		{"example.com/b", "v0.2.0", true},
		{"example.com/c", "v0.3.0", true},
	}
	if !slices.Equal(reqs, want) {
		t.Fatalf("got %v\nwant %v", reqs, want)
	}
	if _, err := parseRequires([]byte("require (\n\texample.com/a\n)\n")); err == nil {
		t.Fatal("a require line without a version was accepted")
	}
}

// TestDirectDependenciesDocumented: every direct requirement of go.mod has a
// row in DEPENDENCIES.md at the same version, and every row is one.
func TestDirectDependenciesDocumented(t *testing.T) {
	direct := directRequires(t)
	listed, err := documentedDirect(readFile(t, "DEPENDENCIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range slices.Sorted(maps.Keys(direct)) {
		switch v, ok := listed[path]; {
		case !ok:
			t.Errorf("go.mod requires %s %s directly but DEPENDENCIES.md does not list it: add a row saying what needs it and why the standard library does not do", path, direct[path])
		case v != direct[path]:
			t.Errorf("DEPENDENCIES.md lists %s at %s, go.mod requires %s", path, v, direct[path])
		}
	}
	for _, path := range slices.Sorted(maps.Keys(listed)) {
		if _, ok := direct[path]; !ok {
			t.Errorf("DEPENDENCIES.md lists %s %s, which go.mod no longer requires directly: remove the row", path, listed[path])
		}
	}
}

// TestShippedModulesDocumented: the module lists and counts in "What ships
// in each binary" are the modules each binary links now.
func TestShippedModulesDocumented(t *testing.T) {
	documented, counts, err := documentedShipped(readFile(t, "DEPENDENCIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range binaries {
		t.Run(name, func(t *testing.T) {
			got := linkedModules(t, name)
			doc, ok := documented[name]
			block := fmt.Sprintf("#### %s: %d modules\n\n```text\n%s\n```", name, len(got), strings.Join(got, "\n"))
			if !ok {
				t.Fatalf("DEPENDENCIES.md has no \"#### %s: N modules\" list; it should read:\n\n%s", name, block)
			}
			if counts[name] != len(doc) {
				t.Errorf("DEPENDENCIES.md says %s links %d modules but lists %d", name, counts[name], len(doc))
			}
			if !slices.Equal(doc, got) {
				var added, gone []string
				for _, m := range got {
					if !slices.Contains(doc, m) {
						added = append(added, m)
					}
				}
				for _, m := range doc {
					if !slices.Contains(got, m) {
						gone = append(gone, m)
					}
				}
				t.Errorf("%s links modules DEPENDENCIES.md does not list: %v\nlisted but no longer linked: %v\nreview the change, then replace the list with:\n\n%s", name, added, gone, block)
			}
		})
	}
}

// TestReporterLinksNoRenderEngine keeps the status reporter apart from the
// renderer (docs/architecture.md): it takes the providers' status
// translations from providers/builtin, so its binary has no render engine,
// no capability catalogue, no served-version migrations and no YAML node
// library. depguard holds the direct imports; this holds what they bring
// along. CEL is linked only through Kubernetes' DRA package (api/dra),
// which evaluates declared DRA selectors against live devices for drift;
// the capability file's selection rules stay out.
func TestReporterLinksNoRenderEngine(t *testing.T) {
	const module = "github.com/airunway-render/airunway-render/"
	cmd := exec.Command("go", "list", "-deps", "./cmd/airunway-status-reporter")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/airunway-status-reporter: %v", err)
	}
	forbidden := []string{module + "render", module + "capabilities", module + "api/versions", module + "api/migrations",
		module + "fn", module + "cli", "sigs.k8s.io/kustomize/kyaml/"}
	var found []string
	for pkg := range strings.Lines(string(out)) {
		pkg = strings.TrimSpace(pkg)
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, strings.TrimSuffix(f, "/")+"/") {
				found = append(found, pkg)
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("the status reporter links %d package(s) of the renderer: %v", len(found), found)
	}
	if strings.Contains(string(out), "github.com/google/cel-go/cel\n") && !strings.Contains(string(out), "k8s.io/dynamic-resource-allocation/cel\n") {
		t.Error("the status reporter links cel-go without the DRA CEL package: what else evaluates CEL there?")
	}
	if !strings.Contains(string(out), module+"providers/builtin\n") {
		t.Error("the status reporter no longer links providers/builtin: which list of providers does it read?")
	}
}
