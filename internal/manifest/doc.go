// Package manifest is how the project reads and writes YAML manifests and
// ResourceLists, byte for byte as kyaml (sigs.k8s.io/kustomize/kyaml) and
// the KRM functions SDK do.
//
// kustomize, kpt and the SDK read and write with kyaml, so the renderer's
// input and output must mean to the renderer exactly what they mean to
// them. The libraries' own readers and writers would do, but at a cost a
// run of 10,000 models cannot pay, and without the input budget a hostile
// repository must meet (docs/security.md): kyaml's reader parses a whole
// file before it counts anything, and the SDK encodes a whole ResourceList
// as one document. This package does the same work its own way, and
// nowhere else in the project is the libraries' reading or writing done
// again:
//
//   - ReadDocuments reads a file's objects as kio.ByteReader does, one
//     document at a time, each charged to the run's budget
//     (internal/budget) as soon as it is parsed (the CLI's input).
//   - ReadResourceList reads a KRM function's input as the SDK's
//     ParseResourceList does: the same inputs accepted, the same items,
//     function config and results read, the list's items and nodes charged
//     as they are read. Where the SDK panics (a YAML alias where it reads
//     a type) the input is refused with a message. Field and StringScalar
//     read a field as the SDK's accessors do.
//   - ResourceListWriter writes a ResourceList as the SDK's
//     ResourceList.ToYAML does, from items encoded one at a time as they
//     are rendered (EncodeItem, render.Options.Encode): the SDK encodes the
//     whole list as one document, ten times the cost (BENCHMARKS.md).
//     EncodeObjectItem writes the same entry from a provider's object
//     itself, without the node tree render would build of it
//     (render.Options.EncodeObject).
//   - EncodeDocument and WriteStream write objects as one YAML stream as
//     kio.ByteWriter does, each object encoded as soon as it is rendered
//     (the CLI's output).
//   - ObjectJSON converts an object to JSON for the API's strict decoding
//     as kyaml's RNode.MarshalJSON does, without writing the object out as
//     text and parsing it again, a third of the cost of reading a model.
//
// The parity suite (parity_test.go reads the versions go.mod requires;
// parity_*_test.go) holds every reader and writer to the library it
// stands in for, at that version, over the corner cases, every YAML file
// of the golden cases and examples, and the corpora of every fuzz target;
// its fuzz targets keep looking. A dependency bump that changes how a
// library reads or writes fails it, naming the library and its version.
// The libraries stay the reference: kyaml is linked anyway, the SDK is a
// test dependency only.
//
// What is not here calls the libraries as they are: kyaml's decoder where
// internal/budget charges a stream kustomize reads and internal/yamlerr
// finds the line of a syntax error (both below this package, which
// charges the budget and describes errors with them), and kio.ByteReader
// and ByteWriter themselves where `migrate` and `catalog add` edit a file
// in place.
package manifest
