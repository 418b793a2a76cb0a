// Package engineargs knows which command-line options each pinned release
// of a model server accepts, so that a typo in `spec.engine.args` fails the
// render instead of the server's start-up ("unrecognized arguments").
//
// vllm.json holds, per vLLM release, the options of its OpenAI server,
// derived from the release's source by hack/derive-engine-args (each
// source file named by repository, commit and sha256; a test re-derives it
// when the pinned files are at hand). images.go maps an image to the
// release it runs; an image whose release cannot be known (a floating tag,
// another registry, a custom build) or a release without a table is not
// checked: the caller says why, it never refuses an option for want of a
// table.
//
// Options are matched as the server parses them: vLLM's
// FlexibleArgumentParser turns underscores in a name into dashes and reads
// "--name.key" as a JSON key of --name, and argparse accepts an
// unambiguous prefix of a long option (allow_abbrev).
package engineargs
