package classroom

import (
	"context"
	"sync"
	"time"
)

// ForEach calls fn for each of n items, at most limit at a time, and
// returns when every call has.
func ForEach(n, limit int, fn func(i int)) {
	if limit < 1 {
		limit = 1
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() {
				<-slots
				wg.Done()
			}()
			fn(i)
		}()
	}
	wg.Wait()
}

// Outcome is how one learner's up or down ended.
type Outcome struct {
	Learner string
	Took    time.Duration
	// Err is nil when it succeeded.
	Err error
	// Interrupted: the context ended while it ran, which is neither a
	// success nor a failure of the learner's.
	Interrupted bool
	// Done counts the learners that succeeded so far, this one included.
	Done int
}

// Run is what an UpAll or a DownAll did.
type Run struct {
	// Done counts the learners that succeeded; Failed names those that
	// failed, in the order they ended.
	Done   int
	Failed []string
}

// Upper creates or repairs a learner's lab and waits until it is ready.
type Upper interface {
	Up(ctx context.Context, learner string) error
}

// Downer removes a learner's lab.
type Downer interface {
	Down(ctx context.Context, learner string) error
}

// UpAll brings up the learners, at most parallel at once; once ctx ends
// no other starts. each is told of every learner that ran, one at a time.
func UpAll(ctx context.Context, c Upper, learners []string, parallel int, each func(Outcome)) Run {
	return fanOut(ctx, learners, parallel, true, c.Up, each)
}

// DownAll removes the learners, Parallel at once; each is told of every
// learner, one at a time.
func DownAll(ctx context.Context, c Downer, learners []string, each func(Outcome)) Run {
	return fanOut(ctx, learners, Parallel, false, c.Down, each)
}

func fanOut(ctx context.Context, learners []string, parallel int, stopOnCancel bool,
	do func(context.Context, string) error, each func(Outcome)) Run {
	var mu sync.Mutex
	var run Run
	ForEach(len(learners), parallel, func(i int) {
		name := learners[i]
		if stopOnCancel && ctx.Err() != nil {
			return
		}
		start := time.Now()
		err := do(ctx, name)
		mu.Lock()
		defer mu.Unlock()
		o := Outcome{Learner: name, Took: time.Since(start), Err: err}
		switch {
		case err == nil:
			run.Done++
		case stopOnCancel && ctx.Err() != nil:
			o.Interrupted = true
		default:
			run.Failed = append(run.Failed, name)
		}
		o.Done = run.Done
		if each != nil {
			each(o)
		}
	})
	return run
}
