# tracecast — see README.md. `make test` is the one test command (CI runs it).
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 60s

# fuzzpass TARGET,BUDGET,MINIMIZE,PACKAGE: one fuzzing pass (no unit tests).
fuzzpass = $(GO) test -run '^$$' -fuzz $(1) -fuzztime $(2) -fuzzminimizetime $(3) $(4)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Packages whose code and tests start no goroutine (the statistics, the
# forecasters, the models, the report): make test runs them without the
# race detector, which makes them 5-10 times slower (ks 39 s against 4 s)
# and can find nothing there. The check below fails make test if one of
# them starts a goroutine, so that it moves back under -race.
PURE_RE = tracecast/(stats(/.*)?|forecast|models(/.*)?|report)$$
RACE_PKGS = $$($(GO) list $(PKGS) | grep -Ev '$(PURE_RE)')
PURE_PKGS = $$($(GO) list $(PKGS) | grep -E '$(PURE_RE)')

.PHONY: all build test test-long deps vet lint fmt docs bench bench-live fuzz demo clean reproduce reproduce-ci forecast-eval backfill-eval closed-loop chaos hostile soak

all: build

# build writes the binary (BIN) with the VCS revision in --version:
# -buildvcs=true, whatever GOFLAGS says, and git describe through -ldflags
# for the checkouts go build does not recognise (a linked git worktree,
# whose .git is a file). CGO_ENABLED=0: only the standard library's net
# package has C code (its resolver, which has a pure-Go twin), and a
# static binary starts 1 ms sooner than one the dynamic loader links
# against libc: −2.4% wall time on the 41 MB trace in 30 paired runs.
# It also runs on any Linux of the architecture. (Tests keep cgo: -race
# needs it.) -tags minimal: gonum/plot's root package then does not link
# its EPS, PDF and TeX backends (go-pdf, encoding/gob), whose initializers
# ran at every start (0.36 M instructions of tracecast --version, 1.3 MB of
# binary); tracecast draws PNG and SVG only, whose backends report/ links
# itself (issue 38, docs/performance.md).
#
# Two binaries (internal/front): BIN, the front binary, runs states and
# --version with only their packages linked (2.6 ms to start against 6 ms),
# and hands every other command to BIN-full beside it, the whole CLI
# (cmd/tracecast, which go run ./cmd/tracecast runs alone).
BIN ?= bin/tracecast
GIT_DESCRIBE := $(shell git describe --always --dirty --abbrev=12 2>/dev/null)
BUILD_FLAGS = -buildvcs=true -tags minimal -ldflags "-X github.com/tracecast/tracecast/internal/buildinfo.describe=$(GIT_DESCRIBE)"

build:
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o $(BIN)-full ./cmd/tracecast
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o $(BIN) ./cmd/tracecast-front

# deps installs what the tests need beside Go: pajeng's pj_dump (the peer
# tool the reader is checked against), python3 (shared/tools/paje_sort.py),
# Node.js + npm (the independent Arrow reader, tools/arrowcheck, and DuckDB
# for the Parquet output, tools/duckcheck), strace and sqlite3 (real
# programs traced for the I/O prediction), chromium (the HTML report is
# checked in a headless browser), R (lm, the independent check of the task
# models). Debian/Ubuntu with apt, as root.
deps:
	@missing=""; \
	command -v pj_dump >/dev/null || missing="$$missing pajeng"; \
	command -v python3 >/dev/null || missing="$$missing python3"; \
	command -v node    >/dev/null || missing="$$missing nodejs"; \
	command -v npm     >/dev/null || missing="$$missing npm"; \
	command -v strace  >/dev/null || missing="$$missing strace"; \
	command -v sqlite3 >/dev/null || missing="$$missing sqlite3"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v Rscript >/dev/null || missing="$$missing r-base-core"; \
	python3 -c 'import confluent_kafka' 2>/dev/null || /usr/bin/python3 -c 'import confluent_kafka' 2>/dev/null || missing="$$missing python3-confluent-kafka"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else echo "please install:$$missing (Debian packages)"; exit 1; fi; \
	fi
	@[ -d tools/arrowcheck/node_modules/apache-arrow ] || npm ci --silent --no-audit --no-fund --prefix tools/arrowcheck
	@[ -d tools/duckcheck/node_modules/@duckdb/node-api ] || npm ci --silent --no-audit --no-fund --prefix tools/duckcheck
	$(GO) mod download

# test runs the unit suite with the race detector in -short mode (tests that
# start processes and brokers, or read the 41 MB trace, skip themselves;
# make test-long runs them), then without -short the README's command
# blocks (TestREADMECommands: a fresh copy of the repository, its binary
# built, every block run), the Kafka commands against a broker requiring
# TLS and SCRAM (TestKafkaSecureCommands) and the two example schedulers,
# Go and Python, acting live on the backfill plans
# (TestSchedulersActLive), short fuzzing smoke passes of every parser and
# of the backfill engine, a one-minute soak of the live service (broker
# restarts and a full broker disk: tools/soak) and a reduced reproduction
# of the window-size study: under 8 minutes on 2 cores from git clone
# (7 min 20 s on 2026-12-07, docs/layout.md). The fault suite
# (make chaos, about 20 min) is a longer check and has its own target, as
# does the 30-minute soak (make soak). Tests that need ../shared skip
# with a message when it is absent. The fuzzing passes run a number
# of inputs (about 5 s each here), not a duration: with a duration, Go
# 1.26's fuzzing coordinator can fail a clean run with a bare "context
# deadline exceeded" as the time runs out (golang/go#75804, fixed in Go
# 1.27), which made make test fail now and then.
test: deps
	$(GO) vet $(PKGS)
	$(GO) vet -tags chaos,hostile ./cmd/tracecast/ # the long suites' files compile (make chaos, make hostile)
	@! grep -rnE '^\s*go [a-zA-Z(]|\.Go\(' --include='*.go' stats forecast models report || { echo 'make test: a package tested without -race starts goroutines: take it out of PURE_RE'; exit 1; }
	$(GO) test -race -short -count=1 -p 4 $(RACE_PKGS) # 4 packages at once: many wait on brokers and processes (2 cores: 3 min 56 s at -p 2, 3 min 4 s at 4)
	$(GO) test -short -count=1 $(PURE_PKGS)
	$(GO) test -count=1 -run '^(TestREADMECommands|TestKafkaSecureCommands|TestSchedulersActLive|TestFrontEqualsFull)$$' . ./cmd/tracecast/ ./examples/scheduler/ ./internal/front/
	$(call fuzzpass,FuzzParse,20000x,20x,./parsers/paje)
	$(call fuzzpass,FuzzParallel,15000x,20x,./parsers/paje)
	$(call fuzzpass,FuzzChunkTokenize,20000x,20x,./parsers/paje)
	$(call fuzzpass,FuzzStrace,80000x,20x,./parsers/iocall)
	$(call fuzzpass,FuzzDocument,60000x,20x,./parsers/power)
	$(call fuzzpass,FuzzProcessor,45000x,20x,./parsers/paje)
	$(call fuzzpass,FuzzDecode,45000x,20x,./ingest/kafka)
	$(call fuzzpass,FuzzEngine,10000x,20x,./backfill) # 10000: the policy's 160-point launch grid made an input 2.4 times dearer (20000 took 72 s)
	SOAK=1m $(GO) test -count=1 -timeout 10m -run '^TestSoak$$' ./tools/soak/
	LOG_LEVEL=warn reproduce/run.sh ci

# test-long runs what make test leaves out: every test without -short (real
# processes and brokers, pj_dump on every shared trace, the parallel reader
# on the large traces, the 41 MB Parquet round trip), with the race detector,
# and the fuzzing passes at their full length (FuzzTokenize too).
test-long: deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)
	$(call fuzzpass,FuzzParse,80000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzParallel,45000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzTokenize,350000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzChunkTokenize,80000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzTailTime,80000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzStrace,240000x,50x,./parsers/iocall)
	$(call fuzzpass,FuzzDocument,120000x,50x,./parsers/power)
	$(call fuzzpass,FuzzProcessor,90000x,50x,./parsers/paje)
	$(call fuzzpass,FuzzDecode,90000x,50x,./ingest/kafka)
	$(call fuzzpass,FuzzEngine,80000x,50x,./backfill)
	$(GO) test -tags chaos -count=1 -timeout 15m -run 'TestChaos(MaxSpeed|ProducerDies|Faults|FiveThousandOpenShortTraces|BrokerDiskFull)' ./cmd/tracecast/
	LOG_LEVEL=warn reproduce/run.sh ci

# docs regenerates the command reference (docs/commands/, one page per
# command, from the commands' own help texts and flags, with cobra's doc
# generator); cmd/tracecast's TestCommandDocs fails when it is stale.
docs:
	$(GO) run ./cmd/tracecast gen-docs docs/commands

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) $(PKGS)

# chaos runs the live service's fault suite (cmd/tracecast/chaos_test.go)
# against the real binary and broker: broker restart, SIGKILL/SIGTERM of
# the pipeline, a group member killed (TestChaosFaults), publication at
# full speed into a running service, a producer dying mid-trace, 5000
# traces open at once; each compares the predictions, verdicts and
# forecasts with an offline replay and logs a table: records lost, changed
# and duplicated per kind, the restart time and the pipelines' peak RSS.
chaos:
	$(GO) test -tags chaos -count=1 -v -timeout 30m -run 'TestChaos' ./cmd/tracecast/

# soak runs the live service for SOAK (30m) under a stream of short runs
# (4 publishers at once, the real StarPU trace one run in ten), a broker
# restart and a full broker disk in turn every 3 minutes, sampling the
# service's resident set, goroutines, open descriptors, consumer lag and
# records out every 10 s: out/soak/soak.csv, soak.svg and summary.txt;
# exit 1 unless the last third's resources are within the first third's
# + 10 %, every run's records equal the offline replay's and the service
# has read its input again within 10 s of each fault (tools/soak; the
# full disk needs root for its tmpfs). make test runs it for a minute.
SOAK ?= 30m
soak: build
	$(GO) run ./tools/soak -binary $(BIN) -duration $(SOAK) -out out/soak

# hostile runs the hostile-input corpus against the real binary, generated
# on the fly: newline floods (plain, gzip), zeros, a 200 MB line, containers
# nested 10^6 deep, 10^6 containers and 10^6 open links (also timed with
# the derived memory limit against none), a 3 M-process strace log, a
# 3 GiB Kwollect document; each ends with a clear error or a correct
# result, its peak RSS within 2 x its limits' worth + 64 MiB (a table).
hostile:
	$(GO) test -tags hostile -count=1 -v -timeout 60m -run 'TestHostile' ./cmd/tracecast/

# forecast-eval scores predict's default method on the acceptance set of
# docs/forecasts.md (needs ../shared; generates SMPI runs with smpirun).
forecast-eval:
	tools/forecast-eval.sh

# backfill-eval runs tracecast backfill on the backfill issue's acceptance
# set (StarPU and SMPI traces; tasks of 1, 10 and 100 ms; wait mode at
# α = 10, kill mode with o = 0.5 ms at α = 1) and prints each group's value
# V per policy and the summary of docs/backfill.md (needs ../shared;
# smpirun for the generated runs; about 3 minutes).
backfill-eval:
	tools/backfill-eval.sh

# closed-loop runs tracecast closed-loop on synthetic DAGs (3 sizes x
# R in {4, 16}, two duration spreads, 5 DAGs each) and prints the table of
# docs/backfill.md#closed-loop (about 3 minutes on 2 idle cores).
closed-loop:
	tools/closed-loop.sh

# bench prints the scaling table — tracecast states --format pjdump against
# pj_dump on the 41 MB StarPU trace and its events repeated to 420 MB and
# 2.1 GB, generated in a temporary directory (needs ../shared; pj_dump takes
# about 150 s on 2.1 GB): wall time, MB/s, peak RSS, ratio to pj_dump's time
# per byte, threads — then the Go benchmarks of the reader and writers, and
# the live latencies (bench-live). docs/performance.md keeps the latest.
bench: deps
	tools/bench.sh
	bash tools/bench-live.sh

# bench-live measures the live pipeline (tail → paje → live predict → kafka,
# in-process broker): (a) latency from a line appended to the tailed trace
# (10k lines/s) to the prediction it completes on the topic, p50/p99 against
# p50 <= 1 ms and p99 <= 5 ms; (b) sustained Kafka ingest of trace lines
# against >= 3M lines/s.
bench-live:
	bash tools/bench-live.sh

# fuzz runs every fuzzing target for FUZZTIME each: a duration (60s) or a
# number of inputs (200000x). A duration run may end with a bare "context
# deadline exceeded" and no input written to testdata/fuzz: that is Go
# 1.26's fuzzing coordinator (golang/go#75804), not a finding; a count
# avoids it.
fuzz:
	$(call fuzzpass,FuzzParse,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzParallel,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzTokenize,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzChunkTokenize,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzTailTime,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzStrace,$(FUZZTIME),50x,./parsers/iocall)
	$(call fuzzpass,FuzzTable,$(FUZZTIME),50x,./parsers/iocall)
	$(call fuzzpass,FuzzReadFiles,$(FUZZTIME),50x,./models/modelio)
	$(call fuzzpass,FuzzDocument,$(FUZZTIME),50x,./parsers/power)
	$(call fuzzpass,FuzzFastJSON,$(FUZZTIME),50x,./parsers/power)
	$(call fuzzpass,'FuzzRead$$',$(FUZZTIME),50x,./parsers/power)
	$(call fuzzpass,FuzzProcessor,$(FUZZTIME),50x,./parsers/paje)
	$(call fuzzpass,FuzzDecode,$(FUZZTIME),50x,./ingest/kafka)
	$(call fuzzpass,FuzzEngine,$(FUZZTIME),50x,./backfill)

demo:
	$(GO) run ./cmd/tracecast demo

# reproduce runs Pallipuram et al.'s (2014) study at this machine's scale (about 2 minutes
# on 2 cores) and writes reproduce/REPORT.md; reproduce-ci a reduced one.
reproduce:
	reproduce/run.sh

reproduce-ci:
	reproduce/run.sh ci

clean:
	rm -rf bin .cache tracecast-demo
