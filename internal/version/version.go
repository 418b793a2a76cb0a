// Package version holds the release both binaries report. It is a package
// of its own so the status reporter can print it without linking the KRM
// function and its SDK.
package version

import "runtime/debug"

// Version is set at build time with
// -ldflags "-X github.com/airunway-render/airunway-render/internal/version.Version=..."
// (make build: `git describe`). It must stay a plain string variable for
// the linker to set it.
var Version = ""

// String is the release to report: Version when the build set it; else
// the module version Go recorded, which is the tag for a binary built by
// `go install github.com/airunway-render/airunway-render/cmd/...@vX.Y.Z`;
// else "dev".
func String() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
