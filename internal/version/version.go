// Package version holds the release both binaries report. It is a package
// of its own so the status reporter can print it without linking the KRM
// function and its SDK.
package version

// Version is set at build time with
// -ldflags "-X github.com/airunway-render/airunway-render/internal/version.Version=...".
var Version = "dev"
