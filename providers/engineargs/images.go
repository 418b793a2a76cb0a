package engineargs

import (
	"regexp"
	"slices"
	"strings"
)

// Server is one release of a model server whose options are known.
type Server struct {
	Engine  string // hub engine type, "vllm"
	Name    string // the engine's name in messages, "vLLM"
	Release string // "v0.11.0"
	// list is the release's options, sorted (the deriver sorts them).
	list []string
}

// imageRule maps an image repository whose tags name the engine release
// they were built from to that engine. Sources:
//
//   - vllm/vllm-openai (Docker Hub, also docker.io/vllm/vllm-openai): vLLM's
//     release pipeline publishes the image of each release vX.Y.Z as
//     vllm/vllm-openai:vX.Y.Z, built from docker/Dockerfile's vllm-openai
//     target at that release's commit, whose ENTRYPOINT runs the OpenAI
//     server: `python3 -m vllm.entrypoints.openai.api_server` at every
//     pinned release up to v0.11.0 (v0.9.0 to v0.10.1.1 read at their
//     commits; v0.11.0 as recorded when its table was derived), and
//     `vllm serve` from v0.11.1 on (read at v0.11.1, v0.11.2, v0.14.0,
//     v0.14.1, v0.15.1, v0.19.0, v0.19.1, v0.23.0 and v0.24.0; vLLM #25967),
//     whose serve subcommand parses with the same make_arg_parser plus
//     its own options (v0.19's --grpc). The vllm and llm-d providers run
//     the image with no command, so the arguments reach that parser;
//     hack/derive-engine-args reads each release's.
//
// Not mapped, hence not checked: Dynamo's nvcr.io/nvidia/ai-dynamo/*-runtime
// images (their `python3 -m dynamo.vllm` adds Dynamo's own options to
// vLLM's, and which vLLM each Dynamo release bundles is not derived here),
// KubeRay's rayproject/ray-llm (Ray passes engine_kwargs, not a command
// line), KAITO (presets), SGLang (no table yet), and any other image.
var imageRules = []struct {
	repositories []string
	engine, name string
}{
	{[]string{"vllm/vllm-openai", "docker.io/vllm/vllm-openai", "index.docker.io/vllm/vllm-openai"}, "vllm", "vLLM"},
}

var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(\.[0-9]+)?$`)

// ReleaseOf names the engine release an image runs: its engine ("vllm")
// and release tag ("v0.11.0"); ok is false, with why, when the image's
// release cannot be known (a floating tag, another registry, a custom
// build). It knows nothing of option tables.
func ReleaseOf(image string) (engine, release string, ok bool, why string) {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i] // a digest pins the bytes; the tag still names the release
	}
	repo, tag := ref, ""
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		repo, tag = ref[:i], ref[i+1:]
	}
	for _, r := range imageRules {
		if !contains(r.repositories, repo) {
			continue
		}
		if !releaseTag.MatchString(tag) {
			if tag == "" {
				tag = "latest"
			}
			return r.engine, "", false, "its tag " + quote(tag) + " names no " + r.name + " release"
		}
		return r.engine, tag, true, ""
	}
	return "", "", false, "airunway-render does not know which server release the image runs"
}

// ForImage returns the server the image runs when its options are known;
// otherwise nil and why the image's arguments cannot be checked.
func ForImage(image string) (*Server, string) {
	engine, tag, ok, why := ReleaseOf(image)
	if !ok {
		return nil, why
	}
	rel := table().byKey[engine+"@"+tag]
	if rel == nil {
		return nil, "this release of airunway-render has no option table for " + nameOf(engine) + " " + tag
	}
	return &Server{Engine: engine, Name: nameOf(engine), Release: tag, list: rel.Options}, ""
}

// nameOf is an engine's name in messages.
func nameOf(engine string) string {
	for _, r := range imageRules {
		if r.engine == engine {
			return r.name
		}
	}
	return engine
}

// Releases lists the engine releases with an option table, as
// "engine@release".
func Releases() []string {
	var out []string
	for _, r := range table().order {
		out = append(out, r.Engine+"@"+r.Release)
	}
	return out
}

// Known reports whether the server accepts the flag key (the name after
// "--", as hub.FlagKey gives it), and otherwise the nearest known option.
func (s *Server) Known(key string) bool {
	name := key
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i] // --json-arg.key sets a key of --json-arg
	}
	opt := "--" + strings.ReplaceAll(name, "_", "-")
	if _, found := slices.BinarySearch(s.list, opt); found {
		return true
	}
	if name == "" {
		return false
	}
	for _, o := range s.list {
		if strings.HasPrefix(o, opt) { // argparse's allow_abbrev
			return true
		}
	}
	return false
}

// Options lists the server's long options, sorted, but --help: the
// options a model server's arguments may suggest.
func (s *Server) Options() []string {
	var out []string
	for _, o := range s.list {
		if strings.HasPrefix(o, "--") && o != "--help" {
			out = append(out, o)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
