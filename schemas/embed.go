// Package schemas embeds the provider CRD schemas derived by
// hack/derive-schemas (see README.md in this directory for their sources).
//
// It exists only because //go:embed cannot reach parent directories: the
// JSON files live at the repository root, so the embed must too. Only
// internal/testing/schemacheck (a test helper) imports it; the production binary
// must not, or it would carry several megabytes of schemas.
package schemas

import "embed"

// FS holds every <provider>/<group>_<kind>_<version>_<release>.json file.
//
//go:embed */*.json
var FS embed.FS
