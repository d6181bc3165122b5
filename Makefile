# hermit: deterministic record/replay debugger.
GO ?= go
# bash for pipefail in the test target.
SHELL := bash
export CGO_ENABLED := 1

.PHONY: build test bench demo vet fmt clean FORCE

build: bin/hermit

bin/hermit: FORCE
	@mkdir -p bin
	$(GO) build -o bin/hermit ./cmd/hermit

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Everything: unit tests, fuzz seed corpora, end-to-end tests with real guests.
# Ends with every skipped test and its reason, and the counts.
test: build vet
	set -o pipefail; $(GO) test -count=1 -timeout 25m -json ./... | $(GO) run ./tests/internal/testreport

# Benchmarks print ratios against native and strace, measured in one run.
bench: build
	$(GO) run ./tests/bench/runbench
	$(GO) run ./tests/bench/tracebench
	$(GO) run ./tests/bench/gdbbench
	$(GO) run ./tests/bench/replbench
	$(GO) run ./tests/bench/revbench
	$(GO) run ./tests/bench/chaosbench

# Build, then run a small bundled racy program twice under hermit: same bytes both times.
demo: build
	@./tests/demo.sh

clean:
	rm -rf bin
