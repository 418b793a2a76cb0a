// Package depscheck has no code of its own: its tests keep DEPENDENCIES.md
// true (every direct requirement of go.mod listed at its exact version, and
// the modules each binary links) and run hack/vulncheck.sh against a small
// vulnerability database they write, so the supply-chain checks are
// exercised offline.
package depscheck
