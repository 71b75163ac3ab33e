# agentgraph developer commands. `make test` is the command CI runs.

SHELL := /bin/bash
GO ?= go
PKGS ?= ./...
# Extra flags for go test, e.g. TESTFLAGS='-run TestX -v' or TESTFLAGS=-json.
TESTFLAGS ?=
# Benchmarks: narrow with BENCH='W1' PKGS=./graph, repeat with COUNT=5.
BENCH ?= .
COUNT ?= 1
# test-stress: busy loops that load the CPUs while the suite runs; the
# default is one per CPU.
STRESS_LOAD ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)

.PHONY: test test-stress test-count bench lint fmt tidy

## test: vet, then run every test with the race detector, in shuffled order;
## a package may take 20 minutes (the race detector on a loaded machine).
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -shuffle=on -timeout 20m $(TESTFLAGS) $(PKGS)

## test-count: make test, reported by internal/cmd/testcount: package
## results, failed tests' output, skipped tests with their reason, and a last
## line "N passed, N failed, N skipped". Fails when a test fails.
test-count:
	@set -o pipefail; $(MAKE) --no-print-directory test TESTFLAGS='-json $(TESTFLAGS)' 2>&1 | $(GO) run ./internal/cmd/testcount

## test-stress: make test-count (the whole suite, uncached) while
## STRESS_LOAD busy loops compete for the CPUs, to catch tests that depend
## on wall-clock speed. The loops are killed when the suite ends.
test-stress:
	@pids=""; for i in $$(seq $(STRESS_LOAD)); do (while :; do :; done) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT INT TERM; \
	echo "test-stress: $(STRESS_LOAD) busy loops running (pids$$pids)"; \
	$(MAKE) --no-print-directory test-count TESTFLAGS='-count=1 $(TESTFLAGS)'

## bench: run the benchmarks with allocation counts.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) $(PKGS)

## lint: gofmt must list no file, and go vet must be clean.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## fmt: format every Go file.
fmt:
	gofmt -w $$(git ls-files '*.go')

## tidy: tidy go.mod and go.sum.
tidy:
	$(GO) mod tidy
