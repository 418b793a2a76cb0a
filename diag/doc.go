// Package diag carries the problems found while rendering: errors that fail a
// run and warnings that do not.
//
// Every stage of the pipeline (decode, default, validate, select, place,
// render) reports into a List instead of returning on the first error, so a
// user sees every problem of every input in one run. A Problem names the field
// path inside its resource; the caller that knows which resource and file the
// problem belongs to fills in Resource and File before the list is shown, and
// the one that holds the object's YAML as read from that file fills in the
// field's Line (package yamlerr finds it).
package diag
