package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// getKwargs is the part of a release's get_kwargs that the "--no-" rule
// reads.
const getKwargs = `
def get_kwargs(cls):
    for field in fields(cls):
        if contains_type(type_hints, bool):
            # Creates --no-<name> and --<name> flags
            kwargs[name]["action"] = argparse.BooleanOptionalAction
`

// A small arg_utils-like file exercises every rule of the package comment.
const sample = getKwargs + `
# parser.add_argument("--in-a-comment") registers nothing
@dataclass
class EngineArgs:
    """Arguments. flag: not a field"""
    model: str = "m"
    enforce_eager: bool = False
    enable_prefix_caching: Optional[bool] = None
    max_model_len: int | None = None
    distributed_executor_backend: (
        str | None
    ) = None
    disable_log_stats: bool = False
    ignore_patterns: list[bool] = None
    kind: ClassVar[bool] = True

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("model_tag", nargs="?")
        parser.add_argument("--model", **model_kwargs["model"])
        parser.add_argument("--enforce-eager", **model_kwargs["enforce_eager"])
        parser.add_argument(
            "--enable-prefix-caching",
            **{**cache_kwargs["enable_prefix_caching"], "default": None})
        parser.add_argument("--max-model-len", **model_kwargs["max_model_len"])
        parser.add_argument("--ignore-patterns", **load_kwargs["ignore_patterns"])
        parser.add_argument("--tensor-parallel-size", "-tp", type=int)
        parser.add_argument("--disable-log-stats", action="store_true", help="it's '--x'")
        parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction)
        for arg, type in [("--old-a", str), ("--old-b", bool)]:
            parser.add_argument(arg, type=type, deprecated=True)

@config
@dataclass
class FrontendArgs:
    host: Optional[str] = None
    """Host: the name."""
    chat_template_content_format: str = "auto"
    """The format.

* "string": an unindented line of a docstring
"""
    allow_credentials: bool = False
    middleware: bool = False

    @staticmethod
    def add_cli_args(parser):
        frontend_kwargs = get_kwargs(FrontendArgs)
        frontend_kwargs["middleware"]["action"] = "append"
        for key, value in frontend_kwargs.items():
            frontend_group.add_argument(f"--{key.replace('_', '-')}", **value)
`

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}

// optionsOf is the options of the release whose files are srcs.
func optionsOf(t *testing.T, srcs map[string]string) []string {
	t.Helper()
	o, err := releaseOptions(srcs)
	require.NoError(t, err)
	return sortedKeys(o)
}

func TestOptions(t *testing.T) {
	r, err := newRelease(map[string]string{"vllm/engine/arg_utils.py": sample})
	require.NoError(t, err)
	require.Equal(t, []string{"model", "enforce_eager", "enable_prefix_caching", "max_model_len", "distributed_executor_backend", "disable_log_stats", "ignore_patterns"}, r.classes["EngineArgs"].fields)
	require.Equal(t, []string{"host", "chat_template_content_format", "allow_credentials", "middleware"}, r.classes["FrontendArgs"].fields)
	require.Equal(t, []string{
		"--allow-credentials", "--chat-template-content-format", "--disable-log-stats", "--enable-log-requests", "--enable-prefix-caching",
		"--enforce-eager", "--help", "--host", "--ignore-patterns", "--max-model-len", "--middleware", "--model",
		"--no-allow-credentials", "--no-enable-log-requests", "--no-enable-prefix-caching", "--no-enforce-eager",
		"--old-a", "--old-b", "--tensor-parallel-size", "-h", "-tp",
	}, optionsOf(t, map[string]string{"vllm/engine/arg_utils.py": sample}))
}

// The members get_kwargs sees in an annotation.
func TestTypeMembers(t *testing.T) {
	for ann, want := range map[string][]string{
		"bool":                            {"bool"},
		"Optional[bool]":                  {"bool", "None"},
		"bool | str | None":               {"bool", "str", "None"},
		"Optional[Union[bool, str]]":      {"bool", "str", "None"},
		"Annotated[bool, SkipValidation]": {"bool"},
		"( str | None )":                  {"str", "None"},
		"list[bool]":                      {"list[bool]"},
		"dict[str, bool] | None":          {"dict[str,bool]", "None"},
		`"bool"`:                          {"bool"},
	} {
		require.Equal(t, want, typeMembers(ann), ann)
	}
}

// vLLM 0.19: get_kwargs(cls) in a base's @classmethod add_cli_args reads
// the fields of the class make_arg_parser calls it on, its base's first;
// each field's extra flags come from value.pop("flags", []); @config makes
// a dataclass when vllm/config/utils.py says so.
const classmethodLoop = getKwargs + `
@config
class BaseFrontendArgs:
    """Base arguments.

    Not the server's own.
    """

    chat_template: str | None = None
    """The template."""
    enable_auto_tool_choice: bool = False

    @classmethod
    def _customize_cli_kwargs(
        cls,
        frontend_kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        return frontend_kwargs

    @classmethod
    def add_cli_args(cls, parser):
        frontend_kwargs = get_kwargs(cls)
        frontend_kwargs = cls._customize_cli_kwargs(frontend_kwargs)
        for key, value in frontend_kwargs.items():
            extra_flags = value.pop("flags", [])
            frontend_group.add_argument(
                *extra_flags, f"--{key.replace('_', '-')}", **value
            )
        return parser


@config
class FrontendArgs(BaseFrontendArgs):
    """Arguments for the server."""

    host: str | None = None
    chat_template: str | None = None
    allow_credentials: bool = False


def make_arg_parser(parser):
    parser.add_argument("model_tag", nargs="?")
    parser = FrontendArgs.add_cli_args(parser)
    return parser
`

const configUtils = `
def config(cls=None, *, config=None, **kwargs):
    def decorator(cls):
        return dataclass(cls, config=merged_config, **kwargs)
    return decorator(cls)
`

func TestClassmethodGetKwargs(t *testing.T) {
	srcs := map[string]string{"vllm/entrypoints/openai/cli_args.py": classmethodLoop, "vllm/config/utils.py": configUtils}
	r, err := newRelease(srcs)
	require.NoError(t, err)
	fields, _, err := r.fieldsOf("FrontendArgs")
	require.NoError(t, err)
	require.Equal(t, []string{"chat_template", "enable_auto_tool_choice", "host", "allow_credentials"}, fields)
	require.Equal(t, []string{
		"--allow-credentials", "--chat-template", "--enable-auto-tool-choice", "--help", "--host",
		"--no-allow-credentials", "--no-enable-auto-tool-choice", "-h",
	}, optionsOf(t, srcs))

	// Without vllm/config/utils.py's pydantic dataclass, @config alone
	// makes no dataclass: there are no fields to read.
	_, err = releaseOptions(map[string]string{"vllm/entrypoints/openai/cli_args.py": classmethodLoop})
	require.ErrorContains(t, err, "class FrontendArgs is not a dataclass")

	// get_kwargs(cls) applies to what make_arg_parser calls, nothing else.
	_, err = releaseOptions(map[string]string{
		"vllm/entrypoints/openai/cli_args.py": strings.Replace(classmethodLoop, "FrontendArgs.add_cli_args(parser)", "AsyncEngineArgs.add_cli_args(parser)", 1),
		"vllm/config/utils.py":                configUtils,
	})
	require.ErrorContains(t, err, "make_arg_parser calls no add_cli_args that is BaseFrontendArgs.add_cli_args")

	// A subclass that overrides add_cli_args does not run the base's loop.
	overriding := strings.Replace(classmethodLoop, "    allow_credentials: bool = False\n", "    allow_credentials: bool = False\n\n    @classmethod\n    def add_cli_args(cls, parser):\n        parser.add_argument(\"--own\")\n", 1)
	_, err = releaseOptions(map[string]string{"vllm/entrypoints/openai/cli_args.py": overriding, "vllm/config/utils.py": configUtils})
	require.ErrorContains(t, err, "make_arg_parser calls no add_cli_args that is BaseFrontendArgs.add_cli_args")
}

// A field's extra flags: only when nothing sets a "flags" key.
func TestExtraFlags(t *testing.T) {
	srcs := map[string]string{
		"vllm/entrypoints/openai/cli_args.py": strings.Replace(classmethodLoop, "        return frontend_kwargs\n", "        frontend_kwargs[\"host\"][\"flags\"] = [\"-H\"]\n        return frontend_kwargs\n", 1),
		"vllm/config/utils.py":                configUtils,
	}
	_, err := releaseOptions(srcs)
	require.ErrorContains(t, err, `a pinned file sets a "flags" key (vllm/entrypoints/openai/cli_args.py line`)

	srcs["vllm/entrypoints/openai/cli_args.py"] = strings.Replace(classmethodLoop, `value.pop("flags", [])`, `value.pop("aliases", [])`, 1)
	_, err = releaseOptions(srcs)
	require.ErrorContains(t, err, `*extra_flags is not bound by extra_flags = value.pop("flags", [])`)
}

// vLLM 0.23's get_kwargs gives bool | str | None a string value, not
// BooleanOptionalAction; before, such a field had "--no-".
func TestBoolStrNone(t *testing.T) {
	engine := `
@dataclass
class EngineArgs:
    hf_token: bool | str | None = None
    trust_remote_code: bool = False

    @staticmethod
    def add_cli_args(parser):
        model_group.add_argument("--hf-token", **model_kwargs["hf_token"])
        model_group.add_argument("--trust-remote-code", **model_kwargs["trust_remote_code"])
`
	require.Equal(t, []string{"--help", "--hf-token", "--no-hf-token", "--no-trust-remote-code", "--trust-remote-code", "-h"},
		optionsOf(t, map[string]string{"vllm/engine/arg_utils.py": getKwargs + engine}))
	special := strings.Replace(getKwargs, "        if contains_type", "        if type_hints == {bool, str, type(None)}:\n            kwargs[name][\"nargs\"] = \"?\"\n        elif contains_type", 1)
	require.Equal(t, []string{"--help", "--hf-token", "--no-trust-remote-code", "--trust-remote-code", "-h"},
		optionsOf(t, map[string]string{"vllm/engine/arg_utils.py": special + engine}))
	// a get_kwargs that gives bools no BooleanOptionalAction: no "--no-"
	require.Equal(t, []string{"--help", "--hf-token", "--trust-remote-code", "-h"},
		optionsOf(t, map[string]string{"vllm/engine/arg_utils.py": engine}))
}

// `vllm serve`'s parser is make_arg_parser's and serve.py's own options;
// FlexibleArgumentParser's --config is read in either quoting.
func TestServeAndConfig(t *testing.T) {
	serve := `
    def subparser_init(self, subparsers):
        serve_parser = subparsers.add_parser(self.name)
        serve_parser = make_arg_parser(serve_parser)
        serve_parser.add_argument("--grpc", action="store_true")
        return serve_parser
`
	require.Equal(t, []string{"--config", "--grpc", "--help", "-h"}, optionsOf(t, map[string]string{
		"vllm/entrypoints/cli/serve.py": serve,
		"vllm/utils/argparse_utils.py":  "        if \"--config\" in args:\n",
	}))
	_, err := releaseOptions(map[string]string{"vllm/entrypoints/cli/serve.py": strings.Replace(serve, "make_arg_parser(serve_parser)", "other_parser(serve_parser)", 1)})
	require.ErrorContains(t, err, "the serve subcommand's parser is not make_arg_parser's")
}

// A call the rules do not cover fails rather than being guessed.
func TestOptionsRefusesWhatItCannotRead(t *testing.T) {
	for _, src := range []string{
		`parser.add_argument(f"--{name}", type=int)`,
		`parser.add_argument(*names, type=int)`,
		`parser.add_argument(arg, type=int)`,
		`parser.add_argument(*names, f"--{key.replace('_', '-')}", **value)`,
		"def add_cli_args(parser):\n    kw = get_kwargs(cls)\n    for key, value in kw.items():\n        parser.add_argument(f\"--{key.replace('_', '-')}\", **value)\n",
		"def add_cli_args(parser):\n    for key, value in kw.items():\n        parser.add_argument(f\"--{key.replace('_', '-')}\", **value)\n",
		"class Plain:\n    x: int = 1\n\ndef add_cli_args(parser):\n    kw = get_kwargs(Plain)\n    for key, value in kw.items():\n        parser.add_argument(f\"--{key.replace('_', '-')}\", **value)\n",
	} {
		_, err := releaseOptions(map[string]string{"vllm/engine/arg_utils.py": src})
		require.Error(t, err, src)
	}
}

// A release whose files are not at hand keeps its entry of the current
// table, only when that entry has the pinned commit and files.
func TestDeriveKeepsAbsentReleases(t *testing.T) {
	current := filepath.Join("..", "..", output)
	var stderr bytes.Buffer
	data, err := derive(t.TempDir(), current, &stderr)
	require.NoError(t, err)
	have, err := os.ReadFile(current)
	require.NoError(t, err)
	require.Equal(t, string(have), string(data))
	require.Contains(t, stderr.String(), "v0.11.0: its pinned files are not in")

	_, err = derive(t.TempDir(), filepath.Join(t.TempDir(), "none.json"), &stderr)
	require.ErrorContains(t, err, "has no table of that commit and those files to keep")
}

func TestRunNeedsPinned(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 2, run(nil, &out, &errb))
	require.Contains(t, errb.String(), "-pinned is required")
}
