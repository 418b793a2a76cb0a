package cli

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a buffer written from another goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBuildStopsPastItsLiveHeap: while a build runs, a live heap past
// buildLiveHeapLimit stops the process with an error saying why; kustomize
// cannot be cancelled, and holds what its transformers copy. The heap is
// grown here by the test itself, as kustomize would grow it.
func TestBuildStopsPastItsLiveHeap(t *testing.T) {
	exited := make(chan int, 1)
	defer func(saved func(int)) { exit = saved }(exit)
	exit = func(code int) { exited <- code }
	var stderr lockedBuffer
	stop := stopAfter(0, &stderr, "build")
	defer stop()

	held := make([][]byte, 0, buildLiveHeapLimit>>20+64)
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
	require.Contains(t, stderr.String(), "[error] the build held more than 512 MiB of objects in memory and was stopped; kustomize copies what a transformer sets")
}
