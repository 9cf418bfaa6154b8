# labctl's build, tests and lab runs. `make help` lists the targets.
SHELL := bash
GO ?= go
BIN := bin/labctl
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/labctl/labctl/cmd/labctl/app.Version=$(VERSION) -X github.com/labctl/labctl/cmd/labctl/app.Commit=$(COMMIT)
# GENERATED are the files `make generate` writes (the lab file's JSON Schema and its Markdown reference); they are committed, and
# `make lint` fails when one is stale.
GENERATED := lab/schema.json docs/lab-format.md
export CGO_ENABLED := 0

.PHONY: help build test test-labs lint generate e2e engine images addons browser up down bench fuzz web

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

build: ## build the static labctl binary into bin/
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/labctl

# LAB_APPS are the Go programs of the labs' workload images, each its own module,
# and labctl's own add-on programs (the wrapper modules with tests of their own).
LAB_APPS := $(patsubst %/go.mod,%,$(wildcard labs/*/images/*/go.mod)) images/addons/build/ingress

test: ## unit tests (no Docker needed), the labs' workload apps and the ingress add-on included
	$(GO) test ./...
	@for app in $(LAB_APPS); do echo "$(GO) -C $$app test ./..."; $(GO) -C $$app test ./... || exit 1; done

generate: ## run the go:generate steps (lab/schema.json from the lab file's Go types)
	$(GO) generate ./...

lint: build ## gofmt, go vet (with and without the e2e tag), generated files up to date, labctl lint of the default lab and of every lab in labs/
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@before=$$(sha256sum $(GENERATED)); $(GO) generate ./...; after=$$(sha256sum $(GENERATED)); \
	if [ "$$before" != "$$after" ]; then echo "stale generated files (regenerated now: review and commit them):"; \
	diff <(echo "$$before") <(echo "$$after") | sed -n 's/^> [0-9a-f]* *//p'; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	@for app in $(LAB_APPS); do echo "$(GO) -C $$app vet ./..."; $(GO) -C $$app vet ./... || exit 1; done
	$(BIN) lint lab.yaml
	@for l in labs/*/lab.yaml; do echo "$(BIN) lint $$l"; $(BIN) lint $$l || exit 1; done

engine: ## install and start a Docker engine fit for kind (Debian, root; CI and test machines)
	hack/docker-engine.sh

images: build engine ## build (or reuse) the offline node and sandbox images
	$(BIN) images build --offline

addons: build engine ## build (or reuse) the add-on images too, before tests that need them (outside their timeouts)
	$(BIN) images build --offline --addons

browser: ## install Debian's Chromium when missing (the browser tests of `labctl ui` drive it headless)
	@command -v chromium >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }

# Two packages run at once (each test's lab has its own name, cluster and
# containers), the longest first so that the short ones fill in beside them;
# tests with a cluster of several nodes take turns (e2etest.Heavy).
# -timeout bounds each package: the longest, provision/kind and usecase/labtest (labctl test of the
# built-in lab, 20 minutes), take 20 to 30 minutes when they share the machine, and up to 50 on a slow
# one; CI stops the whole run at 90.
E2E_FIRST := ./cmd/labctl/... ./provision/kind/... ./provision/class/... ./usecase/labtest/... ./grading/... ./usecase/reset/...
e2e: images addons browser ## integration tests on a real Docker engine and kind cluster, and a real browser
	$(GO) test -tags e2e -count=1 -p 2 -timeout 80m $(E2E_FIRST) ./...

# make e2e proves the built-in lab, rbac-ci and nightly-job (no cluster) whole, netpol-shop's first step's alternatives and its mistake admin-from-tools,
# an alternative of debug-rollout's first step from its bundle, and debug-rollout's solves as a class with learner
# nodes; this proves every lab whole with labctl test, one after another.
test-labs: images addons ## every lab of the repository proves itself whole with labctl test (about 68 minutes)
	@for l in lab.yaml labs/*/lab.yaml; do flags=; case $$l in labs/node-admin/*) flags=--allow-host-access;; esac; \
	echo "$(BIN) --lab $$l test $$flags"; $(BIN) --lab $$l test $$flags || exit 1; done

up: images ## labctl up on the default lab (then: bin/labctl shell)
	$(BIN) up

down: build ## remove the default lab
	$(BIN) down

bench: build ## measure up (with a cluster and without), start after stop, reset, check, grade, shell memory, the browser view and `labctl test` on this machine; one table
	hack/bench.sh

web: ## rebuild the page of `labctl ui` (usecase/web/assets) from web/ and its lockfile; needs Node.js and npm
	cd web && npm ci --ignore-scripts --no-audit --no-fund && node build.mjs

fuzz: ## run the lab loader's fuzz target for a while
	$(GO) test ./lab -run '^$$' -fuzz FuzzParse -fuzztime 2m
