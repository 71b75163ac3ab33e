package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Defaults of Config.
const (
	DefaultMemory       = 512 << 20
	DefaultMaxStack     = 64 << 20
	DefaultCPUTime      = 10 * time.Second
	DefaultMaxResult    = 4 << 20
	DefaultMaxIdle      = 2
	DefaultMaxRuns      = 1000
	DefaultStartTimeout = 30 * time.Second
)

// killGrace is how long past Options.Timeout the host waits for a worker
// to stop the program itself before it kills the worker.
const killGrace = 500 * time.Millisecond

// Config configures a Pool. The zero value takes the defaults.
//
// On Linux a worker dies with its host process, even by SIGKILL: it waits
// on a pidfd of the host (or, on kernels without pidfds, checks its parent
// every 100 ms), whichever of the host's threads started it; a goroutine
// that starts a worker and then ends its thread (runtime.LockOSThread
// without unlocking) leaves the worker alive.
type Config struct {
	// Memory bounds the private writable memory of each worker, in bytes,
	// above its footprint at start. Zero means DefaultMemory.
	Memory int64
	// MaxStack bounds a worker's goroutine stack, in bytes. Zero means
	// DefaultMaxStack.
	MaxStack int
	// CPUTime bounds the CPU time of one run, rounded up to whole
	// seconds. Zero means DefaultCPUTime.
	CPUTime time.Duration
	// MaxResult bounds, in bytes, what one run sends back (its rendered
	// value, globals and output), each host function call's encoded
	// arguments and each value a host function returns, encoded (a larger
	// one fails the call with an error naming the limit). Zero means
	// DefaultMaxResult; more than about 10.6 MiB (maxMaxResult) is refused,
	// since a string of MaxResult bytes can take six times as many once
	// encoded for the worker, which reads frames of at most 64 MiB.
	MaxResult int
	// MaxWorkers bounds the workers alive at once, so the runs in flight;
	// more runs wait for one to end. Zero means GOMAXPROCS, at least 2.
	MaxWorkers int
	// MaxIdle bounds the workers kept alive between runs. Zero means
	// DefaultMaxIdle.
	MaxIdle int
	// MaxRuns is how many runs a worker serves before it is replaced.
	// Zero means DefaultMaxRuns.
	MaxRuns int
	// StartTimeout bounds the start of a worker. Zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Executable is the binary started as a worker; it must import this
	// package. Empty means the running program's own (os.Executable).
	Executable string
	// MaxAbandoned bounds the host function calls left running after
	// their runs ended (a function that ignores its context, past the
	// run's time limit or cancellation): while that many have not
	// returned, a run whose Options.Funcs is not empty fails at once with
	// ErrTooManyAbandoned. Zero means no bound. Pool.Abandoned counts
	// them.
	MaxAbandoned int
	// Logger receives the workers' starts and deaths, at Debug, and each
	// abandoned host function call, and workers started without their own
	// namespaces, at Warn. Nil means none.
	Logger *zap.Logger
	// RequireNamespaces makes a worker that cannot start in its own user
	// and network namespaces (Linux only; see startProcess) fail to start,
	// so its run fails, instead of starting in the host's namespaces.
	RequireNamespaces bool
}

// ErrTooManyAbandoned is the error of a run with host functions started
// while Config.MaxAbandoned abandoned calls have not returned.
var ErrTooManyAbandoned = errors.New("sandbox: too many abandoned host function calls are still running; make the functions return when their context ends, or raise Config.MaxAbandoned")

// A Pool runs programs in worker processes. Its methods are safe for
// concurrent use. Workers start when runs need them and stay alive
// between runs, up to Config.MaxIdle of them.
type Pool struct {
	cfg   Config
	log   *zap.Logger
	slots chan struct{}
	grace time.Duration // killGrace, but in tests
	// abandoned counts the host function calls left running after their
	// runs ended.
	abandoned atomic.Int64

	mu     sync.Mutex
	idle   []*worker
	closed bool
}

// maxMaxResult bounds Config.MaxResult: a host function's string of that
// many bytes, each escaped to six in JSON, still fits a frame the worker
// reads (maxInbound), with room for the frame's other fields.
const maxMaxResult = (maxInbound - 64<<10) / 6

// NewPool returns a pool configured by cfg. It starts no process.
func NewPool(cfg Config) (*Pool, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Memory", cfg.Memory}, {"MaxStack", int64(cfg.MaxStack)}, {"CPUTime", int64(cfg.CPUTime)},
		{"MaxResult", int64(cfg.MaxResult)}, {"MaxWorkers", int64(cfg.MaxWorkers)}, {"MaxIdle", int64(cfg.MaxIdle)},
		{"MaxRuns", int64(cfg.MaxRuns)}, {"StartTimeout", int64(cfg.StartTimeout)}, {"MaxAbandoned", int64(cfg.MaxAbandoned)},
	} {
		if f.v < 0 {
			return nil, fmt.Errorf("sandbox: Config.%s is negative (%d); use zero for the default", f.name, f.v)
		}
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.MaxStack == 0 {
		cfg.MaxStack = DefaultMaxStack
	}
	if cfg.CPUTime == 0 {
		cfg.CPUTime = DefaultCPUTime
	}
	if cfg.MaxResult == 0 {
		cfg.MaxResult = DefaultMaxResult
	}
	if cfg.MaxResult > maxMaxResult {
		return nil, fmt.Errorf("sandbox: Config.MaxResult is %d bytes, more than the %d a worker can be sent (a string is up to six bytes a byte once encoded); lower it", cfg.MaxResult, maxMaxResult)
	}
	if cfg.MaxWorkers == 0 {
		cfg.MaxWorkers = max(2, runtime.GOMAXPROCS(0))
	}
	if cfg.MaxIdle == 0 {
		cfg.MaxIdle = DefaultMaxIdle
	}
	if cfg.MaxRuns == 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Pool{cfg: cfg, log: log, slots: make(chan struct{}, cfg.MaxWorkers), grace: killGrace}, nil
}

// Abandoned returns how many host function calls were left running after
// their runs ended and have not returned yet (see Config.MaxAbandoned).
func (p *Pool) Abandoned() int { return int(p.abandoned.Load()) }

// Close stops the idle workers; the workers of runs in flight stop when
// their runs end. Runs after Close fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
	return nil
}

// Run executes the Starlark program src under opts in a worker. It stops
// when ctx ends. A program that does not run to its end is an *Error.
func (p *Pool) Run(ctx context.Context, src string, opts Options) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, &Error{Kind: KindCancelled, Msg: fmt.Sprintf("the run ended (%v) before the program started", context.Cause(ctx)), Err: context.Cause(ctx)}
	}
	if len(src) > maxInbound/2 {
		return Result{}, fmt.Errorf("sandbox: the program is %d bytes; the limit is %d", len(src), maxInbound/2)
	}
	if n := p.abandoned.Load(); len(opts.Funcs) > 0 && p.cfg.MaxAbandoned > 0 && n >= int64(p.cfg.MaxAbandoned) {
		return Result{}, fmt.Errorf("%w (%d, Config.MaxAbandoned is %d)", ErrTooManyAbandoned, n, p.cfg.MaxAbandoned)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Result{}, &Error{Kind: KindCancelled, Msg: fmt.Sprintf("the run ended (%v) waiting for a worker", context.Cause(ctx)), Err: context.Cause(ctx)}
	}
	defer func() { <-p.slots }()
	w, idle, err := p.get(ctx)
	if err != nil {
		return Result{}, err
	}
	res, healthy, err := p.runOn(ctx, w, src, opts)
	if errors.Is(err, errUndelivered) && idle {
		// The worker died while idle (killed by someone, say): the
		// program never reached it, so it runs on a fresh one.
		p.log.Debug("sandbox worker died while idle", zap.Int("pid", w.cmd.Process.Pid), zap.Stringer("state", w.state))
		if w, err = p.start(ctx); err != nil {
			return Result{}, p.startError(ctx, err)
		}
		res, healthy, err = p.runOn(ctx, w, src, opts)
	}
	p.put(w, healthy)
	return res, err
}

// errUndelivered marks the error of a run whose program could not be
// written to its worker: the worker was dead before the run began.
var errUndelivered = errors.New("the worker was gone before it got the program")

// get returns an idle worker (idle true) or starts one.
func (p *Pool) get(ctx context.Context) (w *worker, idle bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, errors.New("sandbox: the pool is closed")
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, true, nil
	}
	p.mu.Unlock()
	if w, err = p.start(ctx); err != nil {
		return nil, false, p.startError(ctx, err)
	}
	return w, false, nil
}

// startError is the Error of a run whose worker did not start.
func (p *Pool) startError(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return &Error{Kind: KindCancelled, Msg: fmt.Sprintf("the run ended (%v) while its worker started", context.Cause(ctx)), Err: context.Cause(ctx)}
	}
	return &Error{Kind: KindCrash, Msg: "could not start a worker: " + err.Error(), Err: err}
}

// put keeps w for the next run, or stops it.
func (p *Pool) put(w *worker, healthy bool) {
	w.runs++
	p.mu.Lock()
	if healthy && !p.closed && w.runs < p.cfg.MaxRuns && len(p.idle) < p.cfg.MaxIdle {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if healthy {
		w.stop()
	}
}

// worker is one worker process and the host's ends of its pipes.
type worker struct {
	cmd    *exec.Cmd
	in     *os.File      // its standard input
	outF   *os.File      // its standard output
	out    *bufio.Reader // over outF
	stderr *os.File      // its standard error, a file
	runs   int

	stderrPath string // to remove after closing stderr, if not yet

	killOnce sync.Once
	state    *os.ProcessState
	errText  string
}

// start starts a worker and applies the OS limits.
func (p *Pool) start(ctx context.Context) (*worker, error) {
	exe := p.cfg.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the program's executable to start as a worker (set Config.Executable): %w", err)
		}
	}
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	// Standard error goes to a file, read when the worker is dead: a
	// worker writing a long traceback to a pipe nobody reads would hang.
	errF, err3 := os.CreateTemp("", "sandbox-worker-*.stderr")
	if err3 == nil {
		files = append(files, errF)
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errF
	cmd.Env = p.workerEnv()
	if err := startProcess(ctx, cmd, p.log, p.cfg.RequireNamespaces); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	inR.Close()
	outW.Close()
	w := &worker{cmd: cmd, in: inW, outF: outR, out: bufio.NewReaderSize(outR, 64<<10), stderr: errF}
	if os.Remove(errF.Name()) != nil {
		w.stderrPath = errF.Name() // Windows: removed once closed
	}

	startCtx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	stop := context.AfterFunc(startCtx, w.kill)
	var m message
	err := readFrame(w.out, 1<<10, &m)
	if !stop() || err != nil || m.Type != msgReady {
		w.kill()
		w.wait()
		if err == nil {
			err = fmt.Errorf("got a %q frame", m.Type)
		}
		return nil, fmt.Errorf("%s did not start as a worker (it must import package sandbox): %w; %s %s", exe, err, w.state, w.errText)
	}
	if err := limitWorker(cmd.Process.Pid, p.cfg.Memory); err != nil {
		w.kill()
		w.wait()
		return nil, err
	}
	p.log.Debug("sandbox worker started", zap.Int("pid", cmd.Process.Pid))
	return w, nil
}

// workerEnv is a worker's whole environment: none of the host's.
func (p *Pool) workerEnv() []string {
	env := []string{
		envWorker + "=" + workerVersion,
		envHost + "=" + strconv.Itoa(os.Getpid()),
		envCPU + "=" + strconv.FormatInt(int64((p.cfg.CPUTime+time.Second-1)/time.Second), 10),
		envMemory + "=" + strconv.FormatInt(p.cfg.Memory, 10),
		"GOMEMLIMIT=" + strconv.FormatInt(p.cfg.Memory-p.cfg.Memory/8, 10),
		"GOTRACEBACK=none",
		"GOMAXPROCS=1",
	}
	// What a dynamically linked or Windows binary needs to start.
	for _, name := range []string{"LD_LIBRARY_PATH", "SYSTEMROOT", "TMP", "TEMP"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// kill ends the worker's process and closes the host's ends of its pipes
// to it, which unblocks any read or write on them.
func (w *worker) kill() {
	w.killOnce.Do(func() {
		w.cmd.Process.Kill()
		w.in.Close()
	})
}

// wait reaps a killed or dead worker and reads what it wrote to its
// standard error.
func (w *worker) wait() {
	if w.state != nil {
		return
	}
	w.kill()
	w.cmd.Wait()
	w.state = w.cmd.ProcessState
	var b []byte
	if _, err := w.stderr.Seek(0, io.SeekStart); err == nil {
		b, _ = io.ReadAll(io.LimitReader(w.stderr, 16<<10))
	}
	w.errText = strings.TrimSpace(string(b))
	w.outF.Close()
	w.stderr.Close()
	if w.stderrPath != "" {
		os.Remove(w.stderrPath)
	}
}

// stop ends a worker that is not running a program.
func (w *worker) stop() { w.wait() }

// runOn runs src on w. healthy reports whether w can serve another run.
func (p *Pool) runOn(ctx context.Context, w *worker, src string, opts Options) (res Result, healthy bool, err error) {
	loadErr := opts.LoadError
	if loadErr == nil {
		loadErr = ErrLoadDisabled
	}
	wo := &wireOptions{
		Filename: opts.Filename, MaxSteps: opts.MaxSteps, Timeout: int64(opts.Timeout), Modules: opts.Modules,
		MaxCalls: opts.MaxCalls, Entry: opts.Entry, Render: opts.Render, Globals: opts.Globals,
		MaxOutput: opts.MaxOutput, DiscardOutput: opts.DiscardOutput, LoadError: loadErr.Error(),
		MaxResult: p.cfg.MaxResult, CPUSeconds: int64((p.cfg.CPUTime + time.Second - 1) / time.Second), MaxStack: p.cfg.MaxStack,
	}
	if wo.Filename == "" {
		wo.Filename = "code.star"
	}
	if wo.MaxOutput == 0 || wo.MaxOutput > p.cfg.MaxResult {
		wo.MaxOutput = p.cfg.MaxResult
	}
	for name := range opts.Funcs {
		wo.Funcs = append(wo.Funcs, name)
	}
	slices.Sort(wo.Funcs)

	// funcCtx is the context of host function calls; killCtx kills the
	// worker when it ends.
	funcCtx, killCtx := ctx, ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		funcCtx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errTimeLimit)
		defer cancel()
		killCtx, cancel = context.WithTimeout(ctx, opts.Timeout+p.grace)
		defer cancel()
	}
	stopKill := context.AfterFunc(killCtx, w.kill)
	defer stopKill()

	funcErrs := map[string]error{}
	calls := 0
	// dead classifies the death of w; cause is what the host saw.
	dead := func(cause error) (Result, bool, error) {
		w.wait()
		e := p.deathError(ctx, killCtx, opts, w, cause)
		p.log.Debug("sandbox worker died", zap.Int("pid", w.cmd.Process.Pid), zap.Stringer("kind", e.Kind),
			zap.Stringer("state", w.state), zap.String("stderr", w.errText))
		return Result{}, false, e
	}

	if err := writeFrame(w.in, &message{Type: msgRun, Src: src, Opts: wo}); err != nil {
		if ctx.Err() == nil && killCtx.Err() == nil {
			err = fmt.Errorf("%w: %w", errUndelivered, err)
		}
		return dead(err)
	}
	maxFrame := 6*p.cfg.MaxResult + 64<<10
	for {
		var m message
		if err := readFrame(w.out, maxFrame, &m); err != nil {
			w.kill()
			return dead(err)
		}
		switch m.Type {
		case msgCall:
			f, ok := opts.Funcs[m.Name]
			calls++
			if !ok || (opts.MaxCalls > 0 && calls > opts.MaxCalls) {
				w.kill()
				return dead(fmt.Errorf("the worker called %q out of turn", m.Name))
			}
			ret, ok := p.awaitFunc(funcCtx, killCtx, m.Name, f, m.Args)
			if !ok {
				p.log.Warn("sandbox host function abandoned: it had not returned when its run ended",
					zap.String("func", m.Name), zap.Duration("timeout", opts.Timeout), zap.Int64("abandoned", p.abandoned.Load()))
				// The function outlived the run: stop the worker waiting
				// for it and leave the function to its context.
				w.kill()
				w.wait()
				return Result{}, false, p.abandonError(ctx, opts, m.Name)
			}
			if ret.Err != "" {
				funcErrs[m.Name] = ret.goErr
			}
			if err := writeFrame(w.in, &ret.message); err != nil {
				w.kill()
				return dead(err)
			}
		case msgDone:
			if !stopKill() {
				// The wall-time kill fired as the run ended: the worker
				// is gone, though its answer came.
				w.wait()
				healthy = false
			} else {
				healthy = true
			}
			if m.Retire && healthy {
				// Its CPU time for life is spent: it exits.
				w.stop()
				healthy = false
			}
			if m.Error != nil {
				return Result{}, healthy, p.doneError(ctx, funcCtx, opts, m.Error, funcErrs, loadErr)
			}
			if m.Result == nil {
				w.kill()
				return dead(errors.New("the worker sent neither a result nor an error"))
			}
			r := m.Result
			return Result{Value: r.Value, Globals: r.Globals, Output: r.Output, Truncated: r.Truncated, Steps: r.Steps}, healthy, nil
		default:
			w.kill()
			return dead(fmt.Errorf("the worker sent an unexpected %q frame", m.Type))
		}
	}
}

// funcReturn is the answer to a host function call, with the function's
// own error.
type funcReturn struct {
	message
	goErr error
}

// awaitFunc runs a host function for the worker under funcCtx, which ends
// at the run's time limit. A function that has not returned when killCtx
// ends (the time limit and its grace, or the run's cancellation) is left
// running on its own goroutine, counted in p.abandoned until it returns,
// and awaitFunc reports false: a function blocked on something that
// ignores its context must not hold the run.
func (p *Pool) awaitFunc(funcCtx, killCtx context.Context, name string, f Func, rawArgs json.RawMessage) (funcReturn, bool) {
	done := make(chan funcReturn, 1)
	go func() { done <- p.callFunc(funcCtx, name, f, rawArgs) }()
	select {
	case ret := <-done:
		return ret, true
	case <-killCtx.Done():
		select {
		case ret := <-done: // it returned as the run ended
			return ret, true
		default:
			p.abandoned.Add(1)
			go func() {
				<-done
				p.abandoned.Add(-1)
			}()
			return funcReturn{}, false
		}
	}
}

// abandonError is the Error of a run that ended while the host function
// name had not returned.
func (p *Pool) abandonError(ctx context.Context, opts Options, name string) *Error {
	if ctx.Err() != nil {
		return &Error{Kind: KindCancelled, Err: context.Cause(ctx),
			Msg: fmt.Sprintf("the run ended (%v) while the host function %s ran", context.Cause(ctx), name)}
	}
	return &Error{Kind: KindTimeLimit, Err: context.DeadlineExceeded,
		Msg: fmt.Sprintf("the program ran longer than %v: the host function %s had not returned, and its worker was stopped", opts.Timeout, name)}
}

// callFunc runs a host function for the worker. A value that encodes to
// more than Config.MaxResult bytes is not sent: the call fails with an
// error naming the limit, which the program sees, and the worker lives.
func (p *Pool) callFunc(ctx context.Context, name string, f Func, rawArgs json.RawMessage) funcReturn {
	ret := funcReturn{message: message{Type: msgReturn}}
	var args map[string]any
	if err := json.Unmarshal(rawArgs, &args); err != nil {
		ret.Err, ret.goErr = "decoding the arguments: "+err.Error(), err
		return ret
	}
	v, err := f(ctx, args)
	if err != nil {
		ret.Err, ret.goErr = err.Error(), err
		if ret.Err == "" {
			ret.Err = "failed"
		}
		return ret
	}
	tooLarge := func(n int) funcReturn {
		ret.goErr = fmt.Errorf("the host function %s returned %d bytes, more than the sandbox's limit of %d (Config.MaxResult); ask for less", name, n, p.cfg.MaxResult)
		ret.Err = ret.goErr.Error()
		return ret
	}
	if s, ok := v.(string); ok {
		if len(s) > p.cfg.MaxResult {
			return tooLarge(len(s))
		}
		ret.Str = &s
		return ret
	}
	b, err := json.Marshal(v)
	if err != nil {
		ret.Err, ret.goErr = "encoding its value: "+err.Error(), err
		return ret
	}
	if len(b) > p.cfg.MaxResult {
		return tooLarge(len(b))
	}
	ret.Value = b
	return ret
}

// doneError is the Error of a program that stopped in a worker that lives.
func (p *Pool) doneError(ctx, funcCtx context.Context, opts Options, we *wireError, funcErrs map[string]error, loadErr error) *Error {
	e := &Error{Kind: we.Kind, Msg: we.Msg, Func: we.Func, Output: we.Output, Steps: we.Steps}
	switch {
	case ctx.Err() != nil && (e.Kind == KindFunc || e.Kind == KindRuntime):
		e.Kind, e.Func, e.Err = KindCancelled, "", context.Cause(ctx)
		e.Msg = fmt.Sprintf("the run ended (%v) before the program finished", e.Err)
	case errors.Is(context.Cause(funcCtx), errTimeLimit) && (e.Kind == KindFunc || e.Kind == KindRuntime):
		// A host function ran out the clock.
		e.Kind, e.Func = KindTimeLimit, ""
		e.Msg = fmt.Sprintf("the program ran longer than %v and was stopped after %d steps", opts.Timeout, e.Steps)
		fallthrough
	case e.Kind == KindTimeLimit:
		e.Err = context.DeadlineExceeded
	case e.Kind == KindFunc:
		e.Err = funcErrs[e.Func]
	case e.Kind == KindLoad:
		e.Err = loadErr
	}
	return e
}

// deathError is the Error of a program whose worker died.
func (p *Pool) deathError(ctx, killCtx context.Context, opts Options, w *worker, cause error) *Error {
	code := -1
	if w.state != nil {
		code = w.state.ExitCode()
	}
	stderr := w.errText
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(stderr, s) {
				return true
			}
		}
		return false
	}
	switch {
	case ctx.Err() != nil:
		return &Error{Kind: KindCancelled, Msg: fmt.Sprintf("the run ended (%v) before the program finished", context.Cause(ctx)), Err: context.Cause(ctx)}
	case errors.Is(cause, errFrameTooLarge):
		return &Error{Kind: KindOutputLimit, Msg: fmt.Sprintf("the program's result is larger than the limit of %d bytes", p.cfg.MaxResult)}
	case opts.Timeout > 0 && killCtx.Err() != nil:
		return &Error{Kind: KindTimeLimit, Err: context.DeadlineExceeded,
			Msg: fmt.Sprintf("the program ran longer than %v and its worker was stopped", opts.Timeout)}
	case code == exitCPU || killedAtCPULimit(w.state, int64((p.cfg.CPUTime+time.Second-1)/time.Second)):
		return &Error{Kind: KindCPULimit, Msg: fmt.Sprintf("the program used more than %v of CPU time and its worker was stopped", p.cfg.CPUTime)}
	case has("stack overflow", "stack exceeds"):
		return &Error{Kind: KindStackLimit, Msg: fmt.Sprintf("the program nested too deep: its worker passed the stack limit of %d MiB and was stopped", p.cfg.MaxStack>>20)}
	case code == exitMemory || has("out of memory", "cannot allocate memory", "failed to allocate", "cannot map pages", "failed to create new OS thread", "pthread_create failed"):
		return &Error{Kind: KindMemoryLimit, Msg: fmt.Sprintf("the program used more than the memory limit of %d MiB and its worker was stopped", p.cfg.Memory>>20)}
	}
	if has("SIGSEGV") && has("runtime.mallocgc", "runtime.(*mheap)", "runtime.gcAssistAlloc", "runtime.gcBgMarkWorker") {
		// The Go runtime dereferences what a refused mapping left nil.
		return &Error{Kind: KindMemoryLimit, Msg: fmt.Sprintf("the program used more than the memory limit of %d MiB and its worker was stopped when the Go runtime failed allocating", p.cfg.Memory>>20)}
	}
	msg := fmt.Sprintf("the worker died (%v) while it ran the program", w.state)
	if line, _, _ := strings.Cut(stderr, "\n"); line != "" {
		msg += ": " + line
	} else if cause != nil && !errors.Is(cause, io.EOF) && !errors.Is(cause, io.ErrUnexpectedEOF) {
		msg += ": " + cause.Error()
	}
	return &Error{Kind: KindCrash, Msg: msg, Err: cause}
}
