// Package versions lists the served versions of the airunway.ai API and
// turns an object of any of them into the hub (package hub), the one form
// the renderer reads.
//
// Each served version is a package (today only v1alpha1) that owns its wire
// types, strict decoding, its defaults (CRD `default:` markers and
// webhook defaults are per version) and its conversion to the hub, which
// also reports its deprecated fields. This package dispatches on
// apiVersion, so an object of a version that is not served is an error
// naming the versions that are, and adding a version is one entry in
// Served.
package versions
