# agentgraph developer commands. `make test` is the command CI runs.

GO ?= go
PKGS ?= ./...
# Benchmarks: narrow with BENCH='W1' PKGS=./graph, repeat with COUNT=5.
BENCH ?= .
COUNT ?= 1

.PHONY: test bench lint fmt tidy

## test: vet, then run every test with the race detector.
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -shuffle=on $(PKGS)

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
