// Package budget bounds what one run of the renderer reads, whatever the
// entry point: `render` and the other commands reading files, the KRM
// function reading its ResourceList, `build` and the Argo CD plugin reading
// a repository through kustomize.
//
// A repository is hostile input, and every cost of reading it grows with
// one of four things: its bytes, its YAML documents (each becomes an object
// with its own bookkeeping), its YAML nodes once aliases are expanded (a
// few bytes of anchors can stand for gigabytes), and its nesting (the
// parser's own limit). A Budget holds what is left of the first three for
// the run and is charged before the expensive work: bytes before they are
// parsed (ReadAll), the documents a reader can count ahead before it parses
// any (Expect), each document's nodes as soon as it is parsed, without
// expanding its aliases (Document). The first charge past a limit fails the
// run with an Exceeded, whose message names the limit.
//
// The parser builds a document's whole tree before its nodes can be
// counted, so a reader that parses documents on their own first checks each
// one's size (MaxDocumentBytes, LargestDocument): a document holds at most
// about one node per byte. Each object is also bounded on its own
// (yamlerr.MaxExpandedNodes): writing an object out costs about 700 bytes
// per node, and its aliases are expanded by the tools after the renderer.
//
// api/hub/limits.go states the values, and the peak memory they bound.
package budget
