// Command derive-engine-args derives providers/engineargs/vllm.json: for
// every vLLM release the renderer can run (the pinned images of
// providers/engineargs/images.go), the command-line options its OpenAI
// server, `python3 -m vllm.entrypoints.openai.api_server` (the entrypoint
// of the vllm/vllm-openai image at both releases, docker/Dockerfile),
// accepts. They are read from the release's own source, a few pinned files
// named below by repository, tag, commit and sha256, so anyone can check
// where each option came from.
//
// vLLM is not served by the Go module proxy, so the input is a directory
// holding the pinned files at DIR/<repository>/<tag>/<path>, for example
// DIR/github.com/vllm-project/vllm/v0.11.0/vllm/engine/arg_utils.py (copy
// them from a clone: `git show v0.11.0:vllm/engine/arg_utils.py`):
//
//	go run ./hack/derive-engine-args -pinned DIR          # rewrite
//	go run ./hack/derive-engine-args -pinned DIR -check   # compare
//
// A file whose sha256 differs from its pin is an error: the pin, not the
// directory, says which source the table is.
//
// The rule, exactly (no Python runs; the files are scanned as text after
// dropping comments):
//
//   - every `add_argument(` call whose leading arguments are string
//     literals registers those that start with "-" (long options and
//     aliases such as "-tp"); a literal without "-" is a positional
//     argument (model_tag) and registers nothing;
//   - a call whose first argument is a loop variable registers the option
//     strings of the literal list the nearest `for` binding it iterates
//     (vLLM 0.11's deprecated --guided-decoding-* options);
//   - a call whose first argument is the f-string `--{key.replace('_', '-')}`
//     registers `--<field>` for every field of the dataclass of the last
//     `get_kwargs(Class)` before it (vLLM 0.11's FrontendArgs);
//   - "--no-<name>" is registered beside "--<name>" when the call passes
//     argparse.BooleanOptionalAction, or when it spreads `**kwargs[...]`
//     without its own action= and the dataclass field the option sets (its
//     dest, EngineArgs or AsyncEngineArgs) or the FrontendArgs field is
//     annotated with a type naming bool: vLLM's get_kwargs gives such
//     fields BooleanOptionalAction;
//   - FlexibleArgumentParser's own --config (it reads `'--config' in args`
//     in vllm/utils) and argparse's -h/--help are registered too.
//
// A call matching none of these fails the run rather than being guessed.
// What the renderer adds at check time (underscores for dashes, "--a.b"
// JSON keys, unambiguous prefixes, all as FlexibleArgumentParser and
// argparse accept them) is providers/engineargs' business, not the table's.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airunway-render/airunway-render/hack/internal/derived"
	"github.com/airunway-render/airunway-render/providers/engineargs"
)

const output = "providers/engineargs/vllm.json"

// pinned is every source file, per release; the order of files matters
// only for the table's provenance list.
var pinned = []engineargs.Release{
	{
		Engine: "vllm", Release: "v0.9.1", Repository: "github.com/vllm-project/vllm",
		Commit: "b6553be1bc75f046b00046a4ad7576364d03c835",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "0e3c153bfcbef5bd8a7babb9d3b166f67ed2e624b568ca0d6393f0c8cc02bec1"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "677f47c527497c8c7f7ba2c207bd9b1828e911cb0975858205ad9150ab329d85"},
			{Path: "vllm/utils.py", SHA256: "f0efa7240cb1ab43119eb4c950f6fd178d5864f2835cfe44ab2fa58244b21eac"},
		},
	},
	{
		Engine: "vllm", Release: "v0.11.0", Repository: "github.com/vllm-project/vllm",
		Commit: "b8b302cde434df8c9289a2b465406b47ebab1c2d",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "2238ade872b5f7478330fa9ca1214389520e08991582090e3e03e2feabcf95ac"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "1e4c9328cd786ca18b46acbb9604d3dda6430801cb97ee6e5d5a63e4861c4d6d"},
			{Path: "vllm/utils/__init__.py", SHA256: "15644926d0877d9b11694fc03629717a7a47d6f995afdef141746ed385cd4ce4"},
		},
	},
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("derive-engine-args", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("pinned", "", "directory holding the pinned files at <repository>/<tag>/<path>")
	out := fs.String("o", output, "the file to write")
	check := fs.Bool("check", false, "write nothing; exit 1 when the file differs from what the pinned files derive")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "derive-engine-args: -pinned is required (a directory of the pinned vLLM files, see the command's doc)")
		return 2
	}
	data, err := derive(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "derive-engine-args:", err)
		return 1
	}
	return derived.Output("derive-engine-args", *out, *dir, data, *check, stdout, stderr)
}

// derive reads the pinned files under dir and returns the table's bytes.
func derive(dir string) ([]byte, error) {
	t := engineargs.Table{Source: "the OpenAI server's options of each vLLM release, from its source files at the release tag (go run ./hack/derive-engine-args -pinned DIR)"}
	for _, p := range pinned {
		r := p
		r.Files = slices.Clone(p.Files)
		srcs := map[string]string{}
		fields, boolField := map[string][]string{}, map[string]bool{}
		for _, f := range r.Files {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.Repository), r.Release, filepath.FromSlash(f.Path)))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", r.Release, f.Path, err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
				return nil, fmt.Errorf("%s %s: sha256 %s, pinned %s: not the pinned file", r.Release, f.Path, got, f.SHA256)
			}
			srcs[f.Path] = string(b)
			dataclassFields(string(b), fields, boolField)
		}
		opts := map[string]bool{"-h": true, "--help": true}
		for _, f := range r.Files {
			src := srcs[f.Path]
			if strings.HasPrefix(f.Path, "vllm/utils") {
				if strings.Contains(src, "'--config' in args") {
					opts["--config"] = true
				}
				continue
			}
			o, err := options(src, boolField, fields)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", r.Release, f.Path, err)
			}
			for k := range o {
				opts[k] = true
			}
		}
		r.Options = slices.Sorted(func(yield func(string) bool) {
			for k := range opts {
				if !yield(k) {
					return
				}
			}
		})
		t.Releases = append(t.Releases, r)
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
