package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A small arg_utils-like file exercises every rule of the package comment.
const sample = `
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

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("model_tag", nargs="?")
        parser.add_argument("--model", **model_kwargs["model"])
        parser.add_argument("--enforce-eager", **model_kwargs["enforce_eager"])
        parser.add_argument(
            "--enable-prefix-caching",
            **cache_kwargs["enable_prefix_caching"])
        parser.add_argument("--max-model-len", **model_kwargs["max_model_len"])
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
    allow_credentials: bool = False

    @staticmethod
    def add_cli_args(parser):
        frontend_kwargs = get_kwargs(FrontendArgs)
        for key, value in frontend_kwargs.items():
            frontend_group.add_argument(f"--{key.replace('_', '-')}", **value)
`

func TestOptions(t *testing.T) {
	fields, boolField := map[string][]string{}, map[string]bool{}
	dataclassFields(sample, fields, boolField)
	require.Equal(t, []string{"model", "enforce_eager", "enable_prefix_caching", "max_model_len", "distributed_executor_backend", "disable_log_stats"}, fields["EngineArgs"])
	require.Equal(t, []string{"host", "allow_credentials"}, fields["FrontendArgs"])
	got, err := options(sample, boolField, fields)
	require.NoError(t, err)
	require.Equal(t, []string{
		"--allow-credentials", "--disable-log-stats", "--enable-log-requests", "--enable-prefix-caching",
		"--enforce-eager", "--host", "--max-model-len", "--model",
		"--no-allow-credentials", "--no-enable-log-requests", "--no-enable-prefix-caching", "--no-enforce-eager",
		"--old-a", "--old-b", "--tensor-parallel-size", "-tp",
	}, slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	}))
}

// A call the rules do not cover fails rather than being guessed.
func TestOptionsRefusesWhatItCannotRead(t *testing.T) {
	for _, src := range []string{
		`parser.add_argument(f"--{name}", type=int)`,
		`parser.add_argument(*names, type=int)`,
		`parser.add_argument(arg, type=int)`,
	} {
		_, err := options(src, map[string]bool{}, map[string][]string{})
		require.Error(t, err, src)
	}
}

// The pinned files derive exactly what providers/engineargs embeds. They
// are vLLM's, not this repository's, and its CI has no network to GitHub,
// so the check runs only where ENGINEARGS_PINNED names a directory holding
// them (the command's doc says how to make one).
func TestTableIsCurrent(t *testing.T) {
	dir := os.Getenv("ENGINEARGS_PINNED")
	if dir == "" {
		t.Skip("ENGINEARGS_PINNED is unset: the pinned vLLM source files are not in this repository; set it to a directory holding them at <repository>/<tag>/<path> to check providers/engineargs/vllm.json")
	}
	data, err := derive(dir)
	require.NoError(t, err)
	have, err := os.ReadFile(filepath.Join("..", "..", output))
	require.NoError(t, err)
	require.True(t, bytes.Equal(have, data), "%s is not what %s derives: run go run ./hack/derive-engine-args -pinned %s", output, dir, dir)
}

func TestRunNeedsPinned(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 2, run(nil, &out, &errb))
	require.Contains(t, errb.String(), "-pinned is required")
}
