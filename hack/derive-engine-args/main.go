// Command derive-engine-args derives providers/engineargs/vllm.json: for
// every vLLM release the renderer can run (the pinned images of
// providers/engineargs/images.go), the command-line options the server of
// its vllm/vllm-openai image accepts. That image's ENTRYPOINT
// (docker/Dockerfile, target vllm-openai) is
// `python3 -m vllm.entrypoints.openai.api_server` up to v0.11.0, whose
// __main__ parses with make_arg_parser(FlexibleArgumentParser(…)), and
// `vllm serve` from v0.11.1 on (vLLM #25967), whose serve subcommand
// parses with make_arg_parser(serve_parser) plus what
// vllm/entrypoints/cli/serve.py adds itself (v0.19's --grpc); the `vllm`
// parser's own -v/--version precede the subcommand, so they are not the
// server's. The options are read from the release's own source, a few
// pinned files named below by repository, release, commit and sha256, so
// anyone can check where each option came from:
//
//   - vllm/engine/arg_utils.py: EngineArgs, AsyncEngineArgs, get_kwargs;
//   - vllm/entrypoints/openai/cli_args.py: make_arg_parser, FrontendArgs;
//   - FlexibleArgumentParser's file: vllm/utils.py, vllm/utils/__init__.py,
//     from v0.11.1 vllm/utils/argparse_utils.py;
//   - vllm/entrypoints/cli/serve.py, for a release whose image runs
//     `vllm serve` (its parser must be make_arg_parser(serve_parser));
//   - vllm/config/utils.py, for a release whose frontend classes are
//     decorated @config alone (v0.16 on; see the dataclass rule).
//
// vLLM is not served by the Go module proxy, so the input is a directory
// holding the pinned files at DIR/<repository>/<release>/<path>, for
// example DIR/github.com/vllm-project/vllm/v0.11.0/vllm/engine/arg_utils.py
// (copy them from a clone: `git show <commit>:vllm/engine/arg_utils.py`):
//
//	go run ./hack/derive-engine-args -pinned DIR          # rewrite
//	go run ./hack/derive-engine-args -pinned DIR -check   # compare
//
// A file whose sha256 differs from its pin is an error: the pin, not the
// directory, says which source the table is. A release none of whose
// files are in DIR keeps its entry of the current table, when that entry
// has the same commit and files (said on stderr).
//
// The rules, exactly (no Python runs; the files are scanned as text after
// dropping comments):
//
//   - every `add_argument(` call whose leading arguments are string
//     literals registers those that start with "-" (long options and
//     aliases such as "-tp"); a literal without "-" is a positional
//     argument (model_tag) and registers nothing. Control flow is not
//     read: v0.24 registers --model unless the command line is
//     `serve … --help`, and it is registered;
//   - a call whose first argument is a loop variable registers the option
//     strings of the literal list the nearest `for` binding it iterates
//     (vLLM 0.11's deprecated --guided-decoding-* options);
//   - a call `add_argument([*x, ]f"--{key.replace('_', '-')}", **value)`
//     (the get_kwargs loop) registers `--<field>` for every field of the
//     dataclasses get_kwargs reads there: X of the last `get_kwargs(X)` in
//     the enclosing function (v0.10 to v0.15's FrontendArgs); or, for
//     `get_kwargs(cls)`, which must be in a @classmethod add_cli_args of a
//     class B, every class C whose `C.add_cli_args(` the body of a pinned
//     file's make_arg_parser calls and whose add_cli_args is B's (C is B,
//     or inherits it from B without overriding it: vLLM 0.19's
//     FrontendArgs(BaseFrontendArgs)); make_arg_parser calling none is an
//     error;
//   - a dataclass is a top-level class decorated @dataclass, or @config
//     when the release's pinned vllm/config/utils.py has
//     `return dataclass(cls` (its config decorator makes a pydantic
//     dataclass; up to v0.15 it returned the class as is, under
//     @dataclass). Its fields are the `name: annotation` lines at its
//     body's first indentation, outside strings, ClassVar excepted, in
//     order, after those of its base (dataclass inheritance: a field
//     declared again keeps its base's place); a base that is not a
//     dataclass of the pinned files, or several bases, is an error;
//   - each `*x` before the f-string must be bound in that function by
//     `x = value.pop("flags", [])`: a field's extra option strings. No
//     pinned file sets a "flags" key (get_kwargs never does; only
//     run_batch.py's frontend class does, for `vllm run-batch`, not the
//     server), so *x adds nothing; when a pinned file holds the string
//     "flags" other than in that pop, *x fails the run, as no rule reads
//     what it sets;
//   - "--no-<name>" is registered beside each "--<name>" of a call that
//     passes argparse.BooleanOptionalAction, or whose get_kwargs kwargs
//     give it that action: the call spreads `**X["key"]` (or
//     `**{**X["key"], …}`) without its own action=, and the EngineArgs or
//     AsyncEngineArgs field of the option's dest (its first long option,
//     dashes to underscores) is annotated bool; or, in the get_kwargs
//     loop, the field itself is (as annotated by the class that last
//     declares it). Annotated bool means what get_kwargs tests: the
//     release's arg_utils.py has
//     `kwargs[name]["action"] = argparse.BooleanOptionalAction`, and bool
//     is a member of the annotation (X | Y, Optional[X], Union[…] and
//     Annotated[X, …] unwrapped; list[bool] is not bool), except, where
//     get_kwargs has `type_hints == {bool, str, type(None)}` (v0.23 on),
//     when the members are exactly bool, str and None (--hf-token, a
//     string whose value may be left out). A pinned file's
//     `…["key"]["action"] = V` overrides that for the key: "--no-" only
//     when V is BooleanOptionalAction (FrontendArgs' middleware);
//   - FlexibleArgumentParser's own --config (it reads `'--config' in args`
//     or `"--config" in args`) and argparse's -h/--help are registered
//     too.
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
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
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
		// tag object in neuralmagic/vllm snapshot; same commit pinned by coreweave/ml-containers ea0074b "Downgrade vLLM to v0.9.0"
		Engine: "vllm", Release: "v0.9.0", Repository: "github.com/vllm-project/vllm",
		Commit: "58738772410c5e0d60b61db39538a9b313d2d7ad",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "a3e643b756600b1bf5bfe33e26f0357e915ab5c599234e414b17524190d59477"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "749dcefc3402b572e7ec5ca86b56452b9cc6a0213b15d1ca90fd5a91db89ce49"},
			{Path: "vllm/utils.py", SHA256: "c2d9c3af57521c874daa7c90105ed3b462ecef4d88802222f686281569f567e8"},
		},
	},
	{
		// tag in neuralmagic/vllm and bytedance-iaas/vllm snapshots
		Engine: "vllm", Release: "v0.9.0.1", Repository: "github.com/vllm-project/vllm",
		Commit: "5fbbfe9a4c13094ad72ed3d6b4ef208a7ddc0fd7",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "a3e643b756600b1bf5bfe33e26f0357e915ab5c599234e414b17524190d59477"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "749dcefc3402b572e7ec5ca86b56452b9cc6a0213b15d1ca90fd5a91db89ce49"},
			{Path: "vllm/utils.py", SHA256: "c2d9c3af57521c874daa7c90105ed3b462ecef4d88802222f686281569f567e8"},
		},
	},
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
		// tag in neuralmagic/vllm, bytedance-iaas/vllm and ROCm/vllm snapshots
		Engine: "vllm", Release: "v0.9.2", Repository: "github.com/vllm-project/vllm",
		Commit: "a5dd03c1ebc5e4f56f3c9d3dc0436e9c582c978f",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "7b27b861a0b3bf8fa4017103a4c7d8eb53dc3fef9c550760f5eb9ba5e8879ffe"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "197775ffa7382633a556e66eadc0db9fee1a7eb518ec597a9d2255ae138bdaac"},
			{Path: "vllm/utils/__init__.py", SHA256: "719161162cbfc02ae1bacf5b6a2d573565c08fd2882a886061fb693528bbbdbf"},
		},
	},
	{
		// tag in neuralmagic/vllm and bytedance-iaas/vllm snapshots
		Engine: "vllm", Release: "v0.10.0", Repository: "github.com/vllm-project/vllm",
		Commit: "6d8d0a24c02bfd84d46b3016b865a44f048ae84b",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "a8ddb0238bc011e1add035abc77ea19df0276f34c8e9b70dd615c4e209781a10"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "c3990d8ce7d2e8fa5600c84fe3cc058dcff317f202fd7131fbd5232c5766e21f"},
			{Path: "vllm/utils/__init__.py", SHA256: "e272b48da17f7c34acd37780d3b5285c42e925753be9cbb230493134baf8ee07"},
		},
	},
	{
		// tag in bytedance-iaas/vllm snapshot
		Engine: "vllm", Release: "v0.10.1", Repository: "github.com/vllm-project/vllm",
		Commit: "aab549870df50edf0512f0a59b574f692f546465",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "d89d7e420d5b74d6605c2ae3e4c5ff55e0fe1a09d1df0b268bf343d8f0eb73e3"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "eaff33b15886bc3b36c14aeb866da961a23f3161d1ca38cf8114986b2f05f7a4"},
			{Path: "vllm/utils/__init__.py", SHA256: "2f518f801bfcee40499ef91a7c6d817a86bcd4f72871093e55bc170d4e47a6df"},
		},
	},
	{
		// tag in bytedance-iaas/vllm snapshot
		Engine: "vllm", Release: "v0.10.1.1", Repository: "github.com/vllm-project/vllm",
		Commit: "1da94e673c257373280026f75ceb4effac80e892",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "d89d7e420d5b74d6605c2ae3e4c5ff55e0fe1a09d1df0b268bf343d8f0eb73e3"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "1b734d451d349cba20c151d269b641310690ea3b664cc930c311e597fabcb4cf"},
			{Path: "vllm/utils/__init__.py", SHA256: "2f518f801bfcee40499ef91a7c6d817a86bcd4f72871093e55bc170d4e47a6df"},
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
	{
		// vllm-project/vllm-gaudi commit 1e68936f "Set vLLM stable commit for v0.11.1" (VLLM_STABLE_COMMIT); no tag object seen
		Engine: "vllm", Release: "v0.11.1", Repository: "github.com/vllm-project/vllm",
		Commit: "439368496db48d8f992ba8c606a0c0b1eebbfa69",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "37bcea9be048e694321d00cdbd068b8d2f7df253efceaaa2359b34df12d167f8"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "bee9ead853b282a523cf0a2fea57b0d7638a90c7ac6f9f389095b3432f68b63a"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "b237d7783416ff369613ac97d589e18077cdb963dada354ea66a1f1d6a9bcb01"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "7b43eb82bd2c951d1cf3f2c76ef97f9a4f94fceb9330bfb9f8392656b861ac31"},
		},
	},
	{
		// vllm-gaudi tag v0.11.2 / branch releases/v0.11.2 file VLLM_STABLE_COMMIT ("Set vLLM stable commit for v0.11.2"); no tag object seen
		Engine: "vllm", Release: "v0.11.2", Repository: "github.com/vllm-project/vllm",
		Commit: "275de34170654274616082721348b7edd9741d32",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "37bcea9be048e694321d00cdbd068b8d2f7df253efceaaa2359b34df12d167f8"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "bee9ead853b282a523cf0a2fea57b0d7638a90c7ac6f9f389095b3432f68b63a"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "b237d7783416ff369613ac97d589e18077cdb963dada354ea66a1f1d6a9bcb01"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "7b43eb82bd2c951d1cf3f2c76ef97f9a4f94fceb9330bfb9f8392656b861ac31"},
		},
	},
	{
		// vllm-gaudi branch releases/v0.14.0 VLLM_STABLE_COMMIT ("Set vLLM stable commit for v0.14.0")
		Engine: "vllm", Release: "v0.14.0", Repository: "github.com/vllm-project/vllm",
		Commit: "b17039bccc17b94a2ea107272ad7bc93508708df",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "a07546cd72a3906bfa0f5e123e1cec7d7102e0396bde8198a1f9137d1ed3265d"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "fd49646771a8da246ff2e768f205d3ad8ae3fba7c3c9a9afd0575c2853d18672"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "98c719a9d808356058c13df427a96ab2d755fdde8c4d5532ea601ba85613d010"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "20e45bd4271730be4e9abb48da6edbc0d417e291cfa6a424e42a0fb152b276db"},
		},
	},
	{
		// vllm-gaudi tag v0.14.1 VLLM_STABLE_COMMIT
		Engine: "vllm", Release: "v0.14.1", Repository: "github.com/vllm-project/vllm",
		Commit: "d7de043d55d1dd629554467e23874097e1c48993",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "a07546cd72a3906bfa0f5e123e1cec7d7102e0396bde8198a1f9137d1ed3265d"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "fd49646771a8da246ff2e768f205d3ad8ae3fba7c3c9a9afd0575c2853d18672"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "98c719a9d808356058c13df427a96ab2d755fdde8c4d5532ea601ba85613d010"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "20e45bd4271730be4e9abb48da6edbc0d417e291cfa6a424e42a0fb152b276db"},
		},
	},
	{
		// vllm-gaudi tag v0.15.1 VLLM_STABLE_COMMIT
		Engine: "vllm", Release: "v0.15.1", Repository: "github.com/vllm-project/vllm",
		Commit: "1892993bc18e243e2c05841314c5e9c06a80c70d",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "851f5c950e1c86e2612eb450608c2441e367c2ceb2af797e71aba148a4c6bbc2"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "b792b3d02741f0f1cb1dc05723534c91c9d4133c339d6aa50eca6d2a4233137e"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "e383dc0c94b47a66c30bde8fe78b801cfe6637aaf613e78b1e374dcd966d3e06"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "20e45bd4271730be4e9abb48da6edbc0d417e291cfa6a424e42a0fb152b276db"},
		},
	},
	{
		// vllm-gaudi tag v0.19.0 VLLM_STABLE_COMMIT; coreweave be0c520 calls 2a69949bd the "production vLLM commit"
		Engine: "vllm", Release: "v0.19.0", Repository: "github.com/vllm-project/vllm",
		Commit: "2a69949bdadf0e8942b7a1619b229cb475beef20",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "b576b4e3156e7669857e2ed6cbd9a4ac50062472501bc39a80d3642991b5f362"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "095d24532102f71586197b2a2cd84701e00cfa35aa97f3a6121e6ec66eb752cf"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "c6099c33584ab24a629c46141aec60e45f4c44c44aa4b97f2beee5005622b55b"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "8e54055d4ed3d30b49169fb6a9dfa0628d6ada2509c20711527abd953fb73dd9"},
			{Path: "vllm/config/utils.py", SHA256: "15ef68450155cad0657f12022b70e4278598685a817efc12de8f409a41f814ff"},
		},
	},
	{
		// vllm-gaudi tag v0.19.1 VLLM_STABLE_COMMIT
		Engine: "vllm", Release: "v0.19.1", Repository: "github.com/vllm-project/vllm",
		Commit: "b1388b1fbf5aaef47937fabe98931211684666a6",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "b576b4e3156e7669857e2ed6cbd9a4ac50062472501bc39a80d3642991b5f362"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "095d24532102f71586197b2a2cd84701e00cfa35aa97f3a6121e6ec66eb752cf"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "c6099c33584ab24a629c46141aec60e45f4c44c44aa4b97f2beee5005622b55b"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "8e54055d4ed3d30b49169fb6a9dfa0628d6ada2509c20711527abd953fb73dd9"},
			{Path: "vllm/config/utils.py", SHA256: "15ef68450155cad0657f12022b70e4278598685a817efc12de8f409a41f814ff"},
		},
	},
	{
		// vllm-gaudi e7be7208 "Set vLLM stable commit for v0.23.0"; neuralmagic/vllm branch "upstream-v0.23.0" points at same commit
		Engine: "vllm", Release: "v0.23.0", Repository: "github.com/vllm-project/vllm",
		Commit: "0fc695fc6d1d82e9a5ac6835ac8e4e1c83703665",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "3ade2488897d08b5c1fd4ddb815eb5743169907d59741a47867185caab7f250d"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "b10da703f00977dcbbd379f6e0898087a8036693258c4d0c066a2a99b19b0334"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "75b132cec8eda8bf33c0ff8a8348b4a9c9c3e4c4e1a4de00ee54dc36af0e1192"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "e00efebd4e4f459391769ab8a46af9401e830e3be5226abcacfdfd09a77c6a4d"},
			{Path: "vllm/config/utils.py", SHA256: "15ef68450155cad0657f12022b70e4278598685a817efc12de8f409a41f814ff"},
		},
	},
	{
		// vllm-gaudi tag v0.24.0 VLLM_STABLE_COMMIT; coreweave/ml-containers 2038c04 "Use exact commit for vLLM" (v0.24.0)
		Engine: "vllm", Release: "v0.24.0", Repository: "github.com/vllm-project/vllm",
		Commit: "ee0da84ab9e04ac7610e28580af62c365e898389",
		Files: []engineargs.File{
			{Path: "vllm/engine/arg_utils.py", SHA256: "f1a32e2207e9ed2f0d954e3e6457effca17ca907cb0cf17bba2ca8bde855a719"},
			{Path: "vllm/entrypoints/openai/cli_args.py", SHA256: "b10da703f00977dcbbd379f6e0898087a8036693258c4d0c066a2a99b19b0334"},
			{Path: "vllm/entrypoints/cli/serve.py", SHA256: "f89771fe192e7ef262a7600244c918de4cedc426fdeebab8e8c69cfba49694d2"},
			{Path: "vllm/utils/argparse_utils.py", SHA256: "e00efebd4e4f459391769ab8a46af9401e830e3be5226abcacfdfd09a77c6a4d"},
			{Path: "vllm/config/utils.py", SHA256: "5cbaa92e4ec5187f2bb52616ac0ce2972edeb019a42b0e7f4a6cba09147b6126"},
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
	data, err := derive(*dir, *out, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "derive-engine-args:", err)
		return 1
	}
	return derived.Output("derive-engine-args", *out, *dir, data, *check, stdout, stderr)
}

// derive reads the pinned files under dir and returns the table's bytes.
// A release none of whose files are in dir keeps its entry of the
// current table at have (its files could be read once, and are not at
// hand now): said on stderr, and -check compares the rest.
func derive(dir, have string, stderr io.Writer) ([]byte, error) {
	var current engineargs.Table
	if data, err := os.ReadFile(have); err == nil {
		if err := json.Unmarshal(data, &current); err != nil {
			return nil, fmt.Errorf("%s: %v", have, err)
		}
	}
	t := engineargs.Table{Source: "the options the server of the vllm/vllm-openai image accepts at each vLLM release (python3 -m vllm.entrypoints.openai.api_server up to v0.11.0, vllm serve from v0.11.1), from the release's source files at its commit (go run ./hack/derive-engine-args -pinned DIR)"}
	for _, p := range pinned {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p.Repository), p.Release)); errors.Is(err, fs.ErrNotExist) {
			i := slices.IndexFunc(current.Releases, func(c engineargs.Release) bool { return c.Engine == p.Engine && c.Release == p.Release })
			if i < 0 || current.Releases[i].Commit != p.Commit || !slices.Equal(current.Releases[i].Files, p.Files) {
				return nil, fmt.Errorf("%s: its pinned files are not in %s, and %s has no table of that commit and those files to keep", p.Release, dir, have)
			}
			fmt.Fprintf(stderr, "derive-engine-args: %s: its pinned files are not in %s; its table in %s is kept\n", p.Release, dir, have)
			t.Releases = append(t.Releases, current.Releases[i])
			continue
		}
		r := p
		r.Files = slices.Clone(p.Files)
		srcs := map[string]string{}
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
		}
		opts, err := releaseOptions(srcs)
		if err != nil {
			return nil, fmt.Errorf("%s %v", r.Release, err)
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

// releaseOptions derives a release's options from its pinned files (path
// to content), by the rules in the package comment.
func releaseOptions(srcs map[string]string) (map[string]bool, error) {
	rel, err := newRelease(srcs)
	if err != nil {
		return nil, err
	}
	opts := map[string]bool{"-h": true, "--help": true}
	for _, f := range rel.files {
		switch {
		case f.path == "vllm/config/utils.py":
			continue // only says what @config makes (newRelease)
		case strings.HasPrefix(f.path, "vllm/utils"):
			// FlexibleArgumentParser
			if strings.Contains(f.src, "'--config' in args") || strings.Contains(f.src, `"--config" in args`) {
				opts["--config"] = true
			}
			continue
		case f.path == "vllm/entrypoints/cli/serve.py" && !strings.Contains(f.src, "make_arg_parser(serve_parser)"):
			return nil, fmt.Errorf("%s: the serve subcommand's parser is not make_arg_parser's", f.path)
		}
		o, err := rel.options(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.path, err)
		}
		for k := range o {
			opts[k] = true
		}
	}
	return opts, nil
}
