package render

// The models of a run are rendered by several goroutines at once (a KRM
// function over 10,000 models spends three quarters of its time rendering
// and encoding them, and a machine has more than one core), and merged
// into the output in the queue's order, so the output, its problems and
// their order are those of one goroutine rendering them in turn. The steps
// that read what the models before did take their turn in the queue's
// order too (turn): the check for a model defined twice, and the choice of
// a provider by the capability file's CEL rules, whose run's cost and
// results are shared (capabilities.Resolved.Match).

// inOrder calls work for 0..n-1 on up to workers goroutines, no more than
// a few items ahead of merge, and calls merge with each result in order,
// on the caller's goroutine. With one worker it calls work and merge in
// turn on the caller's goroutine. work gets the item's turn: its steps
// between turn.enter and turn.leave (or its end) run in the items' order,
// one item at a time.
func inOrder[T any](n, workers int, work func(i int, t *turn) T, merge func(i int, result T)) {
	turns := newTurns()
	// An item's turn ends with its work at the latest.
	run := func(i int, t *turn) T {
		defer t.leave()
		return work(i, t)
	}
	if workers <= 1 || n < 2 {
		for i := range n {
			merge(i, run(i, turns.next()))
		}
		return
	}
	// A window of results: enough for every worker to have one waiting
	// while another renders, few enough that the models in flight cost
	// nothing next to the output (a run lets go of each model once it is
	// merged).
	window := 2 * workers
	slots := make([]chan T, window)
	for i := range slots {
		slots[i] = make(chan T, 1)
	}
	type job struct {
		i int
		t *turn
	}
	jobs := make(chan job)
	inFlight := make(chan struct{}, window)
	go func() {
		defer close(jobs)
		for i := range n {
			inFlight <- struct{}{} // released once item i-window is merged
			jobs <- job{i, turns.next()}
		}
	}()
	for range min(workers, n) {
		go func() {
			for j := range jobs {
				// The slot is free: item j.i-window was merged before
				// item j.i was sent.
				slots[j.i%window] <- run(j.i, j.t)
			}
		}()
	}
	for i := range n {
		merge(i, <-slots[i%window])
		<-inFlight
	}
}

// turn is one item's place in the order of inOrder's items. Every item
// leaves its turn, entered or not (leave enters it first), by the end of
// its work, so that the next item's can begin; the earliest item in
// flight can always enter, so the items never wait on one another in a
// circle.
type turn struct {
	wait          <-chan struct{} // closed when the item before left its turn
	done          chan struct{}
	entered, left bool
}

// turns hands out the turns in the items' order; one goroutine calls next.
type turns struct{ last chan struct{} }

func newTurns() *turns {
	first := make(chan struct{})
	close(first)
	return &turns{last: first}
}

func (ts *turns) next() *turn {
	t := &turn{wait: ts.last, done: make(chan struct{})}
	ts.last = t.done
	return t
}

// enter waits until every item before this one has left its turn.
func (t *turn) enter() {
	if !t.entered {
		t.entered = true
		<-t.wait
	}
}

// leave ends the item's turn; the next item may enter.
func (t *turn) leave() {
	if !t.left {
		t.enter()
		t.left = true
		close(t.done)
	}
}
