package resilience

import (
	"fmt"
	"sync/atomic"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/common"
	"github.com/failsafe-go/failsafe-go/policy"
)

// bulkheadStage is the bulkhead as a failsafe policy: failsafe's bulkhead
// semaphore bounds concurrent attempts, and an admission channel of capacity
// MaxConcurrent+MaxQueue bounds how many may wait for it, which failsafe's
// bulkhead alone does not. Permits are released with defer, so a panicking
// attempt cannot leak one.
type bulkheadStage[T any] struct {
	cfg    BulkheadConfig
	slots  bulkhead.Bulkhead[T]
	admit  chan struct{}
	full   error
	onFull func()

	running atomic.Int64 // attempts holding a slot
}

func newBulkheadStage[T any](cfg BulkheadConfig, onFull func()) *bulkheadStage[T] {
	return &bulkheadStage[T]{
		cfg:    cfg,
		slots:  bulkhead.New[T](uint(cfg.MaxConcurrent)),
		admit:  make(chan struct{}, cfg.MaxConcurrent+cfg.MaxQueue),
		full:   fmt.Errorf("%w: %d attempts running and %d queued; raise Bulkhead.MaxConcurrent or Bulkhead.MaxQueue, or call less often", ErrBulkheadFull, cfg.MaxConcurrent, cfg.MaxQueue),
		onFull: onFull,
	}
}

// ToExecutor implements failsafe.Policy.
func (b *bulkheadStage[T]) ToExecutor(_ T) any {
	e := &bulkheadExecutor[T]{stage: b}
	e.Executor = e
	return e
}

type bulkheadExecutor[T any] struct {
	policy.BaseExecutor[T]
	stage *bulkheadStage[T]
}

// Apply admits the attempt, waits for a slot, runs it and releases both.
func (e *bulkheadExecutor[T]) Apply(inner func(failsafe.Execution[T]) *common.PolicyResult[T]) func(failsafe.Execution[T]) *common.PolicyResult[T] {
	b := e.stage
	return func(exec failsafe.Execution[T]) *common.PolicyResult[T] {
		select {
		case b.admit <- struct{}{}:
		default:
			b.onFull()
			return &common.PolicyResult[T]{Error: b.full, Done: true}
		}
		defer func() { <-b.admit }()
		// An admitted attempt finds a free slot at once when MaxQueue is 0
		// (slots are released before admissions), so this waits only for
		// queued attempts.
		var err error
		if b.cfg.MaxWait > 0 {
			err = b.slots.AcquirePermitWithMaxWait(exec.Context(), b.cfg.MaxWait)
		} else {
			err = b.slots.AcquirePermit(exec.Context())
		}
		if err != nil {
			if canceled, result := exec.(policy.ExecutionInternal[T]).IsCanceledWithResult(); canceled {
				return result
			}
			b.onFull()
			return &common.PolicyResult[T]{Error: b.full, Done: true}
		}
		b.running.Add(1)
		defer func() {
			b.running.Add(-1)
			b.slots.ReleasePermit()
		}()
		return inner(exec)
	}
}

// status reports the slots in use and the attempts waiting for one.
func (b *bulkheadStage[T]) status() BulkheadStatus {
	running := int(b.running.Load())
	return BulkheadStatus{
		Enabled: true,
		Running: running,
		Queued:  max(len(b.admit)-running, 0),
	}
}
