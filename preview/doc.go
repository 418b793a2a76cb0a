// Package preview is what `airunway-render preview` knows about an
// upgrade of a cluster's capability file (a new operator release, a new
// provider, other pools) beyond the object differences: updates the
// cluster refuses (immutable fields, an exclusive pair of fields, a
// change of API group), updates that replace pods, what the models'
// clients see change (provider, Service, served name, routes), memory fits
// that change, the operators' upgrade notes and the warnings the upgrade
// brings. The command line renders both sides and prints the findings;
// CI and other callers can ask the same questions here.
package preview
