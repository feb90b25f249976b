# homeindexd — see README.md. `make test` is the one command CI runs (.ci/run).
GO        ?= go
BIN       := bin
MEILI_DIR := .cache/meilisearch
export MEILISEARCH_BIN := $(CURDIR)/$(MEILI_DIR)/meilisearch
TEST_FLAGS ?= -race -timeout 12m

.PHONY: all build test fault deps vet lint bench bench-scale demo clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

deps:
	./scripts/install-redis.sh
	./scripts/install-python-redis.sh
	./scripts/install-chromium.sh
	./scripts/install-text-tools.sh
	./scripts/install-meilisearch.sh $(MEILI_DIR)
	./scripts/install-setpriv.sh
	./scripts/install-media-tools.sh
	./scripts/install-thumbnail-ocr-tools.sh

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

# staticcheck is pinned in go.mod (the `tool` directive): `go tool` builds that version, fetching
# it through the module proxy on a fresh machine. Tool dependencies are not linked into bin/.
# The import rules (layers, who may import go-redis) are a test: internal/archtest.
lint:
	$(GO) tool staticcheck ./...

test: deps vet lint
	$(GO) test $(TEST_FLAGS) ./...

# The fault suite (test/e2e/fault_*_test.go, docs/invariants.md) at full size; make test runs it at
# reduced sizes with -race. No -race here: race-built daemons and modules are 5-10x slower, and
# 10,000 files × 2 modules per row would not fit the hour.
fault: deps
	FAULT_FULL=1 $(GO) test -count=1 -v -run 'TestFault' -timeout 90m ./test/e2e

bench: deps
	./scripts/bench.sh

# Not in CI: a million files (about 15 GB of temporary disk and an hour on the 2-core machine).
bench-scale: deps
	./scripts/bench-scale.sh

# The demo needs only redis-server (demo.sh installs it) and the binaries.
demo: build
	BIN=$(BIN) ./scripts/demo.sh

clean:
	rm -rf $(BIN)
