// Package capsfile writes capability files for `airunway-render
// capabilities discover`: a discovered file with each of package
// discover's notes as a comment above the field it explains (Encode), and
// a hand-written file updated with a cluster's facts (Merge), its
// comments, layout, quoting and key order kept. Neither writes a file the
// renderer would refuse to read (larger than hub.MaxObjectBytes, or nested
// deeper than hub.MaxObjectDepth): a TooLargeError says how many nodes and
// pools made it so.
//
// It works on kyaml's node tree, which keeps comments; package discover
// stays free of YAML so the status reporter, which compares but never
// writes files, does not link it.
package capsfile
