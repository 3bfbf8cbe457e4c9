# ephemeral.heat: build, test and demo. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

MODULES      := ephemeral_heat_launch heat_stack heat_db_dump overcloud_precheck config_download
GOARCH       ?= amd64
GO           ?= go
space        := $(empty) $(empty)
comma        := ,
GOTAGS       := remote exclude_graphdriver_btrfs btrfs_noversion exclude_graphdriver_devicemapper containers_image_openpgp
BUILD_FLAGS  := -trimpath -ldflags '-s -w'
COLL_DIR     := collection
COLL_PATH    := $(CURDIR)/.collections
DIST         := dist
VERSION      := $(shell awk '/^version:/{print $$2}' galaxy.yml)
TARBALL      := $(DIST)/ephemeral-heat-$(VERSION).tar.gz
export ANSIBLE_COLLECTIONS_PATH := $(COLL_PATH)
# The podman bindings build without cgo only with these tags: every go command gets them.
export CGO_ENABLED := 0
export GOFLAGS := -tags=$(subst $(space),$(comma),$(GOTAGS))
export PATH := /usr/local/go/bin:$(PATH)
# podman (heat_type container/pod, its tests, heat-image) with runc and ulimits
# this host allows; see README "Container and pod Heat".
export CONTAINERS_CONF ?= $(CURDIR)/scripts/containers.conf

.PHONY: help deps heat-image build build-all collection install test integration demo lint fmt vet clean bench

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: ## install every Debian package the project needs (sudo when not root)
	@scripts/deps.sh

heat-image: deps ## build localhost/ephemeral-heat:<heat version> for heat_type container/pod (Debian packages only, ~2.5 min)
	@scripts/build-heat-image.sh

build: ## static linux/$(GOARCH) module binaries into collection/plugins/modules/
	@for m in $(MODULES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH) $(GO) build $(BUILD_FLAGS) -o $(COLL_DIR)/plugins/modules/$$m ./modules/$$m || exit 1; \
	done
	@echo "built $(MODULES) for linux/$(GOARCH) into $(COLL_DIR)/plugins/modules/"

build-all: ## linux/amd64 binaries, plus linux/arm64 ones in build/arm64/
	@$(MAKE) --no-print-directory build GOARCH=amd64
	@mkdir -p build/arm64
	@for m in $(MODULES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(BUILD_FLAGS) -o build/arm64/$$m ./modules/$$m || exit 1; \
	done
	@echo "built $(MODULES) for linux/arm64 into build/arm64/"

collection: build ## ansible-galaxy collection build into dist/
	@rm -rf build/stage && mkdir -p build/stage $(DIST)
	@cp -a $(COLL_DIR)/. build/stage/
	@cp galaxy.yml README.md build/stage/
	@ansible-galaxy collection build --force --output-path $(DIST) build/stage >/dev/null
	@echo "collection: $(TARBALL)"

install: collection ## install the built collection into .collections/ (ansible.cfg points there)
	@ansible-galaxy collection install --force -p $(COLL_PATH) $(TARBALL) >/dev/null
	@echo "installed ephemeral.heat $(VERSION) into $(COLL_PATH)"

test: deps install lint ## the whole suite: deps, build, lint, unit and integration tests against real Heat
	$(GO) test -count=1 -timeout 60m -p 1 ./...

bench: deps ## benchmarks vs baselines, same run (~45 min): bench/results.md and bench/results.json; BENCH_ARGS='-only launch'
	$(GO) run ./bench/runner $(BENCH_ARGS)

demo: deps install ## launch native Heat, list stacks through openstack, stop it
	@scripts/demo.sh

lint: ## gofmt, go vet, ansible-lint (playbooks, roles, molecule scenarios)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	@# what a plain `go vet ./...` sees: cgo on, no tags (make deps installs the C headers)
	CGO_ENABLED=1 GOFLAGS= $(GO) vet ./...
	ansible-lint --nocolor collection/playbooks collection/roles playbooks molecule

clean: ## remove build outputs
	rm -rf build dist .collections
	@for m in $(MODULES); do rm -f $(COLL_DIR)/plugins/modules/$$m; done
