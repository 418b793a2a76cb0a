// Command noop is the floor of the whole-process benchmarks: a KRM
// function that does nothing. It reads a ResourceList into kyaml nodes and
// writes it back with kyaml's own reader and writer, the cost any Go
// function built on kyaml pays to pass the same bytes through.
// hack/procbench runs it over the renderer's output.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	rw := &kio.ByteReadWriter{Reader: os.Stdin, Writer: os.Stdout, KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	if err == nil {
		err = rw.Write(nodes)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "noop:", err)
		os.Exit(1)
	}
}
