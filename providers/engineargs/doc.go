// Package engineargs knows which command-line options each pinned release
// of a model server accepts, so that a typo in `spec.engine.args` fails the
// render instead of the server's start-up ("unrecognized arguments").
//
// vllm.json holds, per vLLM release, the options of the OpenAI server its
// vllm/vllm-openai image runs (`python3 -m vllm.entrypoints.openai.api_server`
// up to v0.11.0, `vllm serve` from v0.11.1), derived from the release's
// source by hack/derive-engine-args (each source file named by repository,
// commit and sha256; a test re-derives it when the pinned files are at
// hand). It has a table for v0.9.0, v0.9.0.1, v0.9.1, v0.9.2, v0.10.0,
// v0.10.1, v0.10.1.1, v0.11.0, v0.11.1, v0.11.2, v0.14.0, v0.14.1, v0.15.1,
// v0.19.0, v0.19.1, v0.23.0 and v0.24.0: the releases whose source could be
// read at a commit known to be the release's. images.go maps an image to
// the release it runs; an image whose release cannot be known (a floating
// tag, another registry, a custom build) or a release without a table
// (v0.10.2, v0.12.0, any release not listed) is not checked: the caller
// says why, it never refuses an option for want of a table.
//
// Options are matched as the server parses them: vLLM's
// FlexibleArgumentParser turns underscores in a name into dashes and reads
// "--name.key" as a JSON key of --name, and argparse accepts an
// unambiguous prefix of a long option (allow_abbrev).
package engineargs
