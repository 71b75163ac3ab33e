package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"go.starlark.net/starlark"
)

// This file is the worker's main loop.

const (
	// envWorker marks a process started as a worker; its value is the
	// protocol version.
	envWorker     = "AGENTGRAPH_SANDBOX_WORKER"
	workerVersion = "2"
	// envHost holds the pid of the host that started the worker, which
	// the worker watches (watchHost).
	envHost = "AGENTGRAPH_SANDBOX_HOST"
	// envCPU holds the CPU time of one run, in whole seconds
	// (Config.CPUTime), from which the worker sets its hard CPU limit.
	envCPU = "AGENTGRAPH_SANDBOX_CPU"
	// envMemory holds Config.Memory, in bytes, for the worker's own watch
	// of its memory where the operating system sets no limit.
	envMemory = "AGENTGRAPH_SANDBOX_MEMORY"

	// exitCPU is the exit status of a worker that ran out of CPU time.
	exitCPU = 3
	// exitMemory is the exit status of a worker that came close to its
	// memory limit.
	exitMemory = 5
	// exitProtocol is the exit status of a worker that got a frame it
	// does not understand.
	exitProtocol = 4

	// maxInbound bounds the frames a worker reads: a program and its
	// options, or a host function's value.
	maxInbound = 64 << 20

	// freeAbove is the heap size above which a worker returns memory to
	// the OS after a run.
	freeAbove = 64 << 20
)

// init turns the process into a worker when the host started it as one,
// before the rest of the program initialises: any program that imports this
// package, test binaries included, can serve as its own worker.
func init() {
	if os.Getenv(envWorker) == workerVersion {
		os.Exit(serveWorker(os.Stdin, os.Stdout))
	}
}

// serveWorker runs programs sent over in and answers over out until in
// ends. It returns the process's exit status.
func serveWorker(in io.Reader, out io.Writer) int {
	closeInherited()
	watchHost()
	watchCPU()
	hardenWorker()
	if err := writeFrame(out, &message{Type: msgReady}); err != nil {
		return 0
	}
	frames := readFrames(in)
	for {
		m := <-frames
		if m.Type != msgRun || m.Opts == nil {
			fmt.Fprintf(os.Stderr, "sandbox worker: unexpected %q frame\n", m.Type)
			return exitProtocol
		}
		o := m.Opts
		setCPULimit(o.CPUSeconds)
		if o.MaxStack > 0 {
			debug.SetMaxStack(o.MaxStack)
		}
		call := func(name string, args []byte) (starlark.Value, error) {
			if o.MaxResult > 0 && len(args) > o.MaxResult {
				return nil, fmt.Errorf("%s: the arguments come to %d bytes, more than the limit of %d", name, len(args), o.MaxResult)
			}
			if err := writeFrame(out, &message{Type: msgCall, Name: name, Args: args}); err != nil {
				return nil, err
			}
			ret := <-frames
			if ret.Type != msgReturn {
				// The host is confused: nothing to answer.
				os.Exit(exitProtocol)
			}
			switch {
			case ret.Err != "":
				return nil, &hostError{kind: KindFunc, name: name, err: errors.New(ret.Err)}
			case ret.Str != nil:
				return starlark.String(*ret.Str), nil
			}
			return fromJSON(ret.Value)
		}
		stopWatch := watchMemory()
		res, werr := execute(context.Background(), m.Src, o, call)
		stopWatch()
		retire := cpuSpent(o.CPUSeconds)
		if err := writeFrame(out, &message{Type: msgDone, Result: res, Error: werr, Retire: retire}); err != nil || retire {
			return 0
		}
		res, werr, m = nil, nil, message{}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapSys > freeAbove {
			debug.FreeOSMemory()
		}
	}
}

// readFrames reads the host's frames from in, one at a time, for as long
// as the worker lives. It reads even while a program runs, so that the
// worker ends as soon as in ends (the host closed it, or died), whatever
// the program is doing: a worker never outlives its host.
func readFrames(in io.Reader) <-chan message {
	frames := make(chan message)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			var m message
			if err := readFrame(r, maxInbound, &m); err != nil {
				if errors.Is(err, io.EOF) {
					os.Exit(0)
				}
				fmt.Fprintln(os.Stderr, "sandbox worker:", err)
				os.Exit(exitProtocol)
			}
			frames <- m
		}
	}()
	return frames
}
