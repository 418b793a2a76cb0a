# airunway-render: `make demo` renders the shipped example, `make test` runs
# every test. Tools the tests need are built into TOOLS_DIR, a cache outside
# the work tree, so a fresh clone on the same machine does not rebuild them.

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/airunway-render/airunway-render/internal/version.Version=$(VERSION)
TOOLS_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/airunway-render/tools
KUSTOMIZE_VERSION ?= v5.8.2
KUSTOMIZE := $(TOOLS_DIR)/kustomize-$(KUSTOMIZE_VERSION)/kustomize
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
SHARED_CRDS ?= ../shared/crds

export CGO_ENABLED := 0

.PHONY: all build install test twin gitops demo golden bench profile fuzz docs schemas engine-args fmt vet lint tools envtest image help verify-modules vulncheck

all: build

help:
	@echo "make build    build bin/airunway-render and bin/airunway-status-reporter"
	@echo "make install  install both into \$$(go env GOBIN), else \$$(go env GOPATH)/bin"
	@echo "make demo     build bin/airunway-render only, and render the shipped examples"
	@echo "make test     run every test (unit, golden, CLI, kustomize, kpt, reporter on a real API server)"
	@echo "make envtest  build the kube-apiserver and etcd the reporter's tests use (cached)"
	@echo "make twin     run the cluster-twin tests alone: rendered models on the real scheduler and KWOK nodes"
	@echo "make gitops   run the GitOps engines on the twin: real Argo CD and Flux syncing the examples"
	@echo "make golden   regenerate the golden files after an intended change"
	@echo "make bench    run the benchmarks: the function as a process, then the Go benchmarks (BENCHMARKS.md)"
	@echo "make profile  CPU and allocation profiles of the function rendering 1,000 models, and of plan --fleet (2,000 models, 10 clusters)"
	@echo "make fuzz     run every fuzz target for FUZZTIME (default 60s) and report the corpus sizes"
	@echo "make vulncheck  govulncheck on the source and both binaries (VULNCHECK_REQUIRED=1: fail if its database is unreachable)"
	@echo "make verify-modules  go mod verify and go mod tidy -diff (part of make test)"
	@echo "make lint     golangci-lint: layering (depguard), import groups, no init(), standard checks (part of make test)"
	@echo "make image    build the function, Argo CD plugin and status reporter images with buildah"
	@echo "make docs     regenerate the generated parts of docs/ (matrix, field reference, CLI reference) and the ClusterCapabilities CRD of deploy/base"
	@echo "make schemas  re-derive schemas/ and the deploy/ CRD from $(SHARED_CRDS)"
	@echo "make engine-args ENGINEARGS_PINNED=DIR  re-derive providers/engineargs/vllm.json from pinned vLLM files"

build: bin/airunway-render bin/airunway-status-reporter

bin/airunway-render: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/airunway-render

bin/airunway-status-reporter: FORCE
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/airunway-status-reporter

FORCE:

install:
	$(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/airunway-render ./cmd/airunway-status-reporter

$(KUSTOMIZE):
	KUSTOMIZE_VERSION=$(KUSTOMIZE_VERSION) hack/install-kustomize.sh $(dir $@) >/dev/null

# envtest builds a real kube-apiserver and etcd (about 11 minutes cold, then
# cached) for the status reporter's tests; it prints their directory.
ENVTEST_DIR := $(TOOLS_DIR)/envtest
envtest:
	@hack/install-envtest.sh $(ENVTEST_DIR)

# The cluster twin (test/twin): envtest's kube-apiserver and etcd, plus
# kube-scheduler, kube-controller-manager and KWOK (hack/install-twin.sh,
# about 5 minutes cold, then cached). `make twin` runs its tests alone and
# prints where every model's pods landed.
TWIN_DIR := $(TOOLS_DIR)/twin
# The GitOps suite's tests (test/twin, TestGitOps*): real Argo CD and Flux
# controllers (hack/install-gitops.sh builds them, about 15 minutes cold)
# syncing the examples into the twin.
GITOPS_DIR   := $(TOOLS_DIR)/gitops
GITOPS_TESTS := TestGitOps
TWIN_ENV = KUBEBUILDER_ASSETS=$$assets TWIN_ASSETS=$$twin AIRUNWAY_RENDER_BIN=$(CURDIR)/bin/airunway-render \
	  AIRUNWAY_STATUS_REPORTER_BIN=$(CURDIR)/bin/airunway-status-reporter
twin-assets = assets=$$(hack/install-envtest.sh $(ENVTEST_DIR)) || exit 1; \
	assets=$$(echo "$$assets" | tail -n1); \
	twin=$$(hack/install-twin.sh $(TWIN_DIR)) || exit 1; \
	twin=$$(echo "$$twin" | tail -n1)
twin: build
	@$(twin-assets); \
	$(TWIN_ENV) $(GO) test -count=1 -v -skip '$(GITOPS_TESTS)' ./test/twin

gitops: build
	@$(twin-assets); \
	gitops=$$(hack/install-gitops.sh $(GITOPS_DIR)) || exit 1; \
	gitops=$$(echo "$$gitops" | tail -n1); \
	$(TWIN_ENV) GITOPS_ASSETS=$$gitops $(GO) test -count=1 -v -run '$(GITOPS_TESTS)' ./test/twin

tools: $(KUSTOMIZE)
	hack/install-image-tools.sh

demo: bin/airunway-render
	@for ex in examples/*/; do \
	  [ -f $$ex/modeldeployment.yaml ] || continue; \
	  echo "### bin/airunway-render render $$ex"; \
	  bin/airunway-render render $$ex || exit 1; \
	done
	@for caps in examples/kustomize/clusters/*/capabilities.yaml; do \
	  echo "### bin/airunway-render render --capabilities $$caps examples/kustomize/base"; \
	  bin/airunway-render render --capabilities $$caps examples/kustomize/base || exit 1; \
	done
	@for caps in examples/capabilities/*.yaml; do \
	  echo "### bin/airunway-render render --capabilities $$caps examples/vllm-basic"; \
	  bin/airunway-render render --capabilities $$caps examples/vllm-basic || exit 1; \
	done
	@echo "### bin/airunway-render plan --fleet examples/fleet/clusters -f examples/fleet/models"
	@bin/airunway-render plan --fleet examples/fleet/clusters -f examples/fleet/models
	@for c in examples/fleet/clusters/*/; do \
	  echo "### bin/airunway-render render --capabilities $${c}capabilities.yaml examples/fleet/models"; \
	  bin/airunway-render render --capabilities $${c}capabilities.yaml examples/fleet/models || exit 1; \
	done

# make test: hack/test.sh, which starts the builds of the tools the
# cluster tests need (kube-apiserver and etcd, the twin, Argo CD and Flux,
# kustomize, buildah) in the background, runs lint and every test that
# needs none of them meanwhile, then the cluster tests, the GitOps suite
# last. Tests find the tools through environment variables; the two
# binaries are built first so the tests run exactly what `make build` ships.
test:
	@GO=$(GO) MAKE=$(MAKE) TOOLS_DIR=$(TOOLS_DIR) ENVTEST_DIR=$(ENVTEST_DIR) TWIN_DIR=$(TWIN_DIR) \
	  GITOPS_DIR=$(GITOPS_DIR) KUSTOMIZE=$(KUSTOMIZE) GITOPS_TESTS='$(GITOPS_TESTS)' \
	  TEST_FUZZTIME=$(TEST_FUZZTIME) hack/test.sh

# make test replays every fuzz target's seeds (go test does); it fuzzes
# only when TEST_FUZZTIME is set (make test TEST_FUZZTIME=5s). make fuzz
# fuzzes each target for FUZZTIME and prints its corpus size; a failing
# input lands in <pkg>/testdata/fuzz/.
TEST_FUZZTIME ?=
FUZZTIME      ?= 60s
fuzz:
	hack/fuzz.sh $(FUZZTIME)

# Supply chain (DEPENDENCIES.md): the module cache still matches go.sum,
# and go.mod lists exactly what the code needs.
verify-modules:
	$(GO) mod verify
	$(GO) mod tidy -diff

# govulncheck, pinned in hack/vulncheck.sh, on ./... and both binaries. The
# script exits 3 when a vulnerability affects the code and 4 when its
# database (GOVULNDB, default https://vuln.go.dev; file:///path for a local
# copy) cannot be reached: a warning here unless VULNCHECK_REQUIRED=1.
vulncheck: build
	@TOOLS_DIR=$(TOOLS_DIR) hack/vulncheck.sh bin/airunway-render bin/airunway-status-reporter; rc=$$?; \
	if [ $$rc -eq 4 ] && [ "$(VULNCHECK_REQUIRED)" != 1 ]; then \
	  echo "vulncheck: SKIPPED, the vulnerability database is unreachable (VULNCHECK_REQUIRED=1 makes this an error)" >&2; \
	  exit 0; \
	fi; \
	exit $$rc

golden:
	$(GO) test ./golden/ -run TestGolden -update

# The benchmarks (BENCHMARKS.md): the function binary as a process on 1 to
# 10,000 ModelDeployments against a kyaml no-op floor, kubectl kustomize and
# kpt fn eval, plan --fleet, render and plan at scale (hack/procbench;
# first, on a quiet machine), then every package's Go benchmarks (the
# stages per provider, the function in process, a fleet's assignment, the
# status reporter with 1,000 and 10,000 ModelDeployments on envtest).
# BENCHMARKS.md says what each part costs.
BENCHTIME ?= 1s
bench: build
	$(GO) build -trimpath -ldflags '-s -w' -o bin/kyaml-noop ./hack/procbench/noop
	$(GO) build -o bin/procbench ./hack/procbench
	$(GO) build -o bin/procbench-runner ./hack/procbench/runner
	bin/procbench -bin bin/airunway-render -floor bin/kyaml-noop -runner bin/procbench-runner
	@assets=$$(hack/install-envtest.sh $(ENVTEST_DIR)) || exit 1; \
	assets=$$(echo "$$assets" | tail -n1); set -x; \
	KUBEBUILDER_ASSETS=$$assets $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 30m ./...

# CPU and allocation profiles of the function rendering 1,000 models in
# process, and of plan --fleet over 2,000 models and 10 clusters,
# summarised; explore further with `go tool pprof bin/fn.test
# bin/cpu.pprof` (or mem.pprof; bin/cli.test with bin/fleet-*.pprof).
profile:
	$(GO) test ./fn -run '^$$' -bench 'BenchmarkFunction/models=1000$$' -benchtime 10x \
	  -cpuprofile bin/cpu.pprof -memprofile bin/mem.pprof -o bin/fn.test
	$(GO) tool pprof -top -cum -nodecount 40 bin/fn.test bin/cpu.pprof
	$(GO) tool pprof -top -sample_index=alloc_space -nodecount 20 bin/fn.test bin/mem.pprof
	$(GO) test ./cli -run '^$$' -bench 'BenchmarkPlanFleet/models=2000/' -benchtime 1x \
	  -cpuprofile bin/fleet-cpu.pprof -memprofile bin/fleet-mem.pprof -o bin/cli.test
	$(GO) tool pprof -top -cum -nodecount 40 bin/cli.test bin/fleet-cpu.pprof
	$(GO) tool pprof -top -sample_index=alloc_space -nodecount 20 bin/cli.test bin/fleet-mem.pprof

# What is generated from the code: the generated parts of docs/
# (hack/gendocs), the two CRDs of deploy/base, derived
# from the Go types (hack/gencrd), and the Go tables of the derived
# model catalog and engine options (hack/gentables). A test of each
# fails when its output is stale.
docs:
	$(GO) run ./hack/gendocs
	$(GO) run ./hack/gencrd
	$(GO) run ./hack/gentables

# SCHEMA_MODULES=false re-derives offline, keeping the files derived from Go
# modules (hack/derive-schemas/modules.go) as they are. SCHEMA_PINNED=DIR
# also re-derives the pinned Git files from DIR/<repository>/<path>; without
# it they are kept (schemas/README.md says where each comes from).
schemas:
	$(GO) run ./hack/derive-schemas -crds $(SHARED_CRDS) -out schemas -modules=$(or $(SCHEMA_MODULES),true) $(if $(SCHEMA_PINNED),-pinned $(SCHEMA_PINNED))

# The options of each pinned vLLM release (providers/engineargs/vllm.json),
# from the pinned files under ENGINEARGS_PINNED=DIR/<repository>/<tag>/<path>
# (hack/derive-engine-args says which).
engine-args:
	$(GO) run ./hack/derive-engine-args -pinned $(ENGINEARGS_PINNED)
	$(GO) run ./hack/gentables

fmt: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) fmt ./...

$(GOLANGCI_LINT):
	GOLANGCI_LINT_VERSION=$(GOLANGCI_LINT_VERSION) hack/install-golangci-lint.sh $(dir $@) >/dev/null

# The layering rules (.golangci.yml: arrows point down only), import groups,
# no init(), and the standard checks. golangci-lint is built once per
# version into TOOLS_DIR. Two runs at once (two checkouts' make test) wait
# for each other around golangci-lint's lock instead of failing.
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run --allow-serial-runners ./...

vet:
	$(GO) vet ./...

# The images (Dockerfile): the KRM function, the Argo CD plugin sidecar and
# the status reporter, built with buildah from the binaries `make build`
# made (the *-prebuilt stages: no registry needed). IMAGE_TAG is the release
# the examples and deploy/base name, so a local build is what they run.
IMAGE_REPO ?= ghcr.io/airunway-render
IMAGE_TAG  ?= v0.1.0
IMAGES     := prebuilt:airunway-render argocd-plugin-prebuilt:argocd-plugin status-reporter-prebuilt:airunway-status-reporter

image: build
	@hack/install-image-tools.sh
	@for pair in $(IMAGES); do \
	  stage=$${pair%%:*}; name=$${pair#*:}; \
	  echo "buildah bud --target $$stage -t $(IMAGE_REPO)/$$name:$(IMAGE_TAG) ."; \
	  buildah bud -q --target $$stage -t $(IMAGE_REPO)/$$name:$(IMAGE_TAG) . >/dev/null || exit 1; \
	done
