package reporter_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRollingUpdate is a rolling update of the reporter: two replicas, and
// the leader stopped (as Kubernetes stops the old pod) while provider
// statuses change. Nothing is lost and nothing is written twice: every
// ModelDeployment ends showing its provider's last status, each shows the
// change once (Running, then Failed, no flapping), and both replicas
// together send one status write per change.
func TestRollingUpdate(t *testing.T) {
	c := cluster(t)
	ns := c.namespace(t, "rolling")
	objs, models := renderBench(t, ns, 40)
	ctx := context.Background()
	for _, o := range objs {
		require.NoError(t, applyObject(ctx, c.admin, o))
	}
	for _, m := range models {
		require.NoError(t, writeStatus(ctx, c.admin, m, true))
	}
	tr := newTracker()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchModels(watchCtx, t, c.cfg, ns, tr)
	var running []<-chan struct{}
	for _, m := range models {
		running = append(running, tr.expect(m.name, "Running"))
	}

	var counter requestCounter
	cfg := counter.wrap(c.cfg) // one counter for both replicas
	first, stopFirst := run(t, cfg, testOptions(ns))
	second, stopSecond := run(t, cfg, testOptions(ns))
	await(t, "every model Running", time.Minute, running...)
	leader, follower, stopLeader := first, second, stopFirst
	select {
	case <-first.Elected():
	case <-second.Elected():
		leader, follower, stopLeader = second, first, stopSecond
	case <-time.After(30 * time.Second):
		t.Fatal("no reporter was elected")
	}
	settle(t, leader)
	before := counter.snapshot()

	// Half the models change under the old leader; then it stops, and the
	// rest change during and after the hand-over.
	var failed []<-chan struct{}
	for i, m := range models {
		failed = append(failed, tr.expect(m.name, "Failed"))
		if i == len(models)/2 {
			stopLeader()
		}
		require.NoError(t, writeStatus(ctx, c.admin, m, false))
	}
	select {
	case <-follower.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not take over")
	}
	await(t, "every model Failed", 2*time.Minute, failed...)

	// One status write per change, across both replicas, and no more.
	writes := func() int { return delta(counter.snapshot(), before)["PATCH status"] }
	settles(t, writes, len(models))
	// A write is counted once its answer is back, maybe after the request
	// counter saw it.
	require.Eventually(t, func() bool { return follower.Writes() > 0 }, hangBound, 100*time.Millisecond, "the new leader wrote nothing: the hand-over was not exercised")
	t.Logf("status writes during the update: %d for %d changes; the old leader wrote %d, the new one %d", writes(), len(models), leader.Writes(), follower.Writes())
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range models {
		h := tr.phases[m.name]
		i := slices.Index(h, "Running")
		require.GreaterOrEqual(t, i, 0, "%s never showed Running: %v", m.name, h)
		require.Equal(t, []string{"Running", "Failed"}, h[i:], "%s: each change shows once", m.name)
	}
}
