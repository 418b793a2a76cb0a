// Package ownci tells a test whether it runs in this repository's own CI.
//
// A user's CI (GitHub Actions, GitLab and most others set CI=true) has only
// what the README asks for: Go and a network to the module proxy. This
// repository's CI has more: root, kpt on the PATH and the upstream CRDs in
// ../shared beside the clone. A test that needs one of those skips,
// saying why, on a user's machine or CI; in this repository's CI, which
// .ci/run marks with AIRUNWAY_RENDER_CI=1, the same test fails instead,
// so that a broken machine cannot pass by skipping. The variable is the
// project's own because CI=true says nothing about which CI it is.
package ownci
