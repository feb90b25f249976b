# homeindexd — see README.md. `make test` is the one command CI runs (.ci/run).
GO        ?= go
BIN       := bin
MEILI_DIR := .cache/meilisearch
export MEILISEARCH_BIN := $(CURDIR)/$(MEILI_DIR)/meilisearch
TEST_FLAGS ?= -race -timeout 12m

.PHONY: all build test deps vet bench demo clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

deps:
	./scripts/install-redis.sh
	./scripts/install-python-redis.sh
	./scripts/install-meilisearch.sh $(MEILI_DIR)

vet:
	$(GO) vet ./...

test: deps vet
	$(GO) test $(TEST_FLAGS) ./...

bench: deps
	./scripts/bench.sh

# The demo needs only redis-server (demo.sh installs it) and the binaries.
demo: build
	BIN=$(BIN) ./scripts/demo.sh

clean:
	rm -rf $(BIN)
