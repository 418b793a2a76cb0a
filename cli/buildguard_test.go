package cli

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBuildStopsPastItsLiveHeap: while a build runs, a live heap past
// its limit stops the process with an error saying why; kustomize cannot
// be cancelled, and holds what its transformers copy. The heap is grown
// here by the test itself, as kustomize would grow it, past a limit just
// above what the process holds now (buildLiveHeapLimit is 512 MiB, which
// other tests' builds watch for at the same time).
func TestBuildStopsPastItsLiveHeap(t *testing.T) {
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	limit := live[0].Value.Uint64() + 32<<20
	exited := make(chan int, 1)
	// Written before exit is called, read after it was: no lock needed.
	var stderr bytes.Buffer
	done := make(chan struct{})
	defer close(done)
	go watchHeap(done, &stderr, "build of app", limit, func(code int) { exited <- code })

	held := make([][]byte, 0, 64)
	for range cap(held) {
		held = append(held, make([]byte, 1<<20))
	}
	runtime.GC() // the live heap is measured at each collection
	select {
	case code := <-exited:
		require.Equal(t, 1, code)
	case <-time.After(time.Minute): // only catches a guard that never trips
		t.Fatal("the build was not stopped")
	}
	runtime.KeepAlive(held)
	require.Contains(t, stderr.String(), "[error] the build of app held more than")
	require.Contains(t, stderr.String(), "of objects in memory and was stopped; kustomize copies what a transformer sets")
}
