// Package render is the pure engine: items in, items out, no cluster, no
// network, no clock, no environment.
//
// Render runs the pipeline over every ModelDeployment among the input items:
//
//	decode -> default -> convert -> validate -> select -> place -> render -> emit
//
// classify (classify.go) sorts the items into models, capability files,
// ModelCatalogs and what passes through, refusing an item no tool could
// read as api/versions judges it (CheckShape, CheckDocument,
// CheckAPIVersion). Decode, default and the conversion to the hub belong
// to the model's served version (api/versions picks it: api/v1alpha1 or
// api/v1alpha2); validation runs on the hub (api/hub), which every later
// stage reads. The capability file is resolved by package capabilities;
// selection (engine and provider, with the upstream CEL rules) is in
// select.go, eligibility in eligible.go, placement in place.go, the memory
// fit in fit.go and fitvllm.go (a provider whose operator sizes the nodes
// itself answers through providers.MemoryFitter); providers/<name> render
// objects; emit annotates the ModelDeployment with the decisions
// (annotate.go), names the file of every generated object (filenames.go),
// marks it, replaces what an earlier run generated and detects collisions
// (emit.go).
//
// With Options.Encode, emit also hands every output object to the caller's
// encoder as soon as it is rendered, and the result holds bytes, not node
// trees. With Options.ReleaseItems, Render lets go of each input tree once
// it is done with it, and gives problems their lines while the tree is at
// hand (lines.go); with Options.Deferred (Defer, classify.go), the models
// come as text the caller parses again one at a time. Together they let
// 10,000 models render in about 200 MiB (BENCHMARKS.md).
//
// The models are rendered on several goroutines (Options.Workers,
// inorder.go) and merged into the output in the queue's order: the
// output, the problems and the memory fit's verdicts are those of one
// goroutine rendering the models in turn. The steps that read what the
// models before a model did (the duplicate check, and the selection by
// the capability file's CEL rules, whose cost and results a run shares)
// take each model's turn in that order.
//
// Problems of all inputs are collected; if any is an error the result has no
// items at all, so a caller can never write half a rendering.
package render
