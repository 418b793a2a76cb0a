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
//
// It also judges an input item before anything reads it (items.go): a
// shape kyaml's accessors can read (CheckShape), a Kubernetes object
// (CheckDocument), and an apiVersion and kind that is ours and served, or
// not ours at all (CheckAPIVersion); render, build and migrate refuse the
// same items with the same words. MigrateItem (migrateitem.go) is one
// item's migration, shared by the `migrate` function and the command.
package versions
