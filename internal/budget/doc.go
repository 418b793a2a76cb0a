// Package budget bounds what one run of the renderer reads, whatever the
// entry point: `render` and the other commands reading files, the KRM
// function reading its ResourceList, `build` and the Argo CD plugin reading
// a repository through kustomize.
//
// A repository is hostile input, and every cost of reading it grows with
// one of four things: its bytes, its YAML documents (each becomes an object
// with its own bookkeeping), its YAML nodes once aliases are expanded (a
// few bytes of anchors can stand for gigabytes), and its nesting. A Budget
// holds what is left of each for the run and is charged before the
// expensive work: bytes before they are parsed, a document's nodes as soon
// as it is parsed, without expanding its aliases. The first charge past a
// limit fails the run with an error that names the limit.
package budget
