// Command gentables writes the derived JSON tables the renderer reads on
// every run as Go source: fit/catalog.json as fit/catalog_table.go and
// providers/engineargs/vllm.json as providers/engineargs/vllm_table.go.
//
// Why: a process renders one model in about 30 ms, and parsing the two
// files (320 KB) with encoding/json took 3–7 ms of it; a Go composite
// literal of strings and numbers is laid out by the linker and costs
// nothing at start-up. The JSON files stay the reviewed, derived
// artifacts (hack/derive-model-catalog, hack/derive-engine-args write
// them); TestTablesAreCurrent checks that each Go table is its JSON file.
//
//	go run ./hack/gentables          # rewrite the Go tables
//	go run ./hack/gentables -check   # exit 1 when one has drifted
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/hack/internal/golit"
	"github.com/airunway-render/airunway-render/providers/engineargs"
)

// table is one JSON file and the Go variable it becomes.
type table struct {
	json, gofile, pkg, variable string
	// value is a pointer to a value of the JSON file's shape.
	value any
}

// tables are the files, relative to the repository's root.
func tables() []table {
	return []table{
		{"fit/catalog.json", "fit/catalog_table.go", "fit", "catalogTable", new(fit.Catalog)},
		{"providers/engineargs/vllm.json", "providers/engineargs/vllm_table.go", "engineargs", "vllmTable", new(engineargs.Table)},
	}
}

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 when a Go table differs from its JSON file")
	flag.Parse()
	status := 0
	for _, t := range tables() {
		if err := generate(".", t, *check); err != nil {
			fmt.Fprintln(os.Stderr, "gentables:", err)
			status = 1
		}
	}
	os.Exit(status)
}

// generate writes (or with check compares) one table under root.
func generate(root string, t table, check bool) error {
	t.json, t.gofile = filepath.Join(root, t.json), filepath.Join(root, t.gofile)
	data, err := os.ReadFile(t.json)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, t.value); err != nil {
		return fmt.Errorf("%s: %v", t.json, err)
	}
	src, err := golit.File(t.pkg, t.variable, "go run ./hack/gentables", filepath.ToSlash(mustRel(root, t.json)), reflect.ValueOf(t.value).Elem())
	if err != nil {
		return fmt.Errorf("%s: %v", t.gofile, err)
	}
	if check {
		have, err := os.ReadFile(t.gofile)
		if err != nil || string(have) != string(src) {
			return fmt.Errorf("%s is not what %s gives; run go run ./hack/gentables", t.gofile, t.json)
		}
		fmt.Printf("gentables: %s is current\n", t.gofile)
		return nil
	}
	if err := os.WriteFile(t.gofile, src, 0o644); err != nil {
		return err
	}
	fmt.Printf("gentables: wrote %s\n", t.gofile)
	return nil
}

func mustRel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		panic(err)
	}
	return r
}
