# ephemeral.heat: build, test and demo. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

MODULES      := ephemeral_heat_launch heat_stack heat_db_dump overcloud_precheck config_download overcloud_playbook overcloud_workdir
GOARCH       ?= amd64
GO           ?= go
space        := $(empty) $(empty)
comma        := ,
GOTAGS       := remote exclude_graphdriver_btrfs btrfs_noversion exclude_graphdriver_devicemapper containers_image_openpgp
BUILD_FLAGS  := -trimpath -ldflags '-s -w'
COLL_DIR     := collection
COLL_PATH    := $(CURDIR)/.collections
DIST         := dist
# galaxy.yml is in the collection tree: this checkout's ansible_collections/ephemeral/heat
# (a link to collection/) is then the collection, with its version and roles.
VERSION      := $(shell awk '/^version:/{print $$2}' $(COLL_DIR)/galaxy.yml)
# The oldest Go that builds this project: go.mod's go line (README says the same; make lint checks).
GO_MIN       := $(shell awk '/^go /{print $$2}' go.mod)
# What the collection tarball holds besides collection/ (make stage); collection/ has
# galaxy.yml and CHANGELOG.rst.
STAGE_FILES  := README.md LICENSE changelogs
TARBALL      := $(DIST)/ephemeral-heat-$(VERSION).tar.gz
export ANSIBLE_COLLECTIONS_PATH := $(COLL_PATH)
# The podman bindings build without cgo only with these tags: every go command gets them.
export CGO_ENABLED := 0
export GOFLAGS := -tags=$(subst $(space),$(comma),$(GOTAGS))
export PATH := /usr/local/go/bin:$(PATH)
# podman (heat_type container/pod, its tests, heat-image) with runc and ulimits
# this host allows; see README "Container and pod Heat".
export CONTAINERS_CONF ?= $(CURDIR)/scripts/containers.conf
# Test packages run at once by `make test` (go test -p). Each test starts its own Heat,
# MariaDB, RabbitMQ and podman objects on free loopback ports and temp dirs, so packages
# do not share state; most of their time is one single-threaded python3 process (heat-all,
# ansible-playbook), so two at a time use both cores of the 2-core machines this runs on.
TEST_PARALLEL ?= 2

.PHONY: help deps check-go heat-image build build-all stage collection install test integration demo lint sanity changelog release fmt vet clean bench sanity-run parity-zed

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: ## install every Debian package the project needs (sudo when not root)
	@scripts/deps.sh

heat-image: deps ## build localhost/ephemeral-heat:<heat version> for heat_type container/pod (Debian packages only, ~2.5 min)
	@scripts/build-heat-image.sh

check-go: ## fail with what to do when the Go found is older than go.mod's
	@v=$$($(GO) env GOVERSION 2>/dev/null) || v=; v=$${v#go}; \
	if [ -z "$$v" ] || [ "$$(printf '%s\n%s\n' "$(GO_MIN)" "$$v" | sort -V | head -n1)" != "$(GO_MIN)" ]; then \
	  echo "This project needs Go $(GO_MIN) or newer (go.mod); found: $$($(GO) version 2>&1 | head -n1)." >&2; \
	  echo "Install Go $(GO_MIN)+ from https://go.dev/dl/ into /usr/local/go (this Makefile puts /usr/local/go/bin first on PATH)," >&2; \
	  echo "or, with Go 1.21 or newer, run with GOTOOLCHAIN=auto so that go fetches go$(GO_MIN) through the module proxy." >&2; \
	  exit 1; \
	fi

build: check-go ## static linux/$(GOARCH) module binaries into collection/plugins/modules/
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

stage: build ## the collection's files in build/stage/ (collection/ plus $(STAGE_FILES))
	@rm -rf build/stage && mkdir -p build/stage
	@cp -a $(COLL_DIR)/. build/stage/
	@cp -a $(STAGE_FILES) build/stage/

collection: stage ## ansible-galaxy collection build into dist/
	@mkdir -p $(DIST)
	@ansible-galaxy collection build --force --output-path $(DIST) build/stage >/dev/null
	@echo "collection: $(TARBALL)"

install: collection ## install the tarball into .collections/ (what the integration tests and molecule use)
	@ansible-galaxy collection install --force -p $(COLL_PATH) $(TARBALL) >/dev/null
	@echo "installed ephemeral.heat $(VERSION) into $(COLL_PATH)"

test: deps install lint ## the whole suite: deps, build, lint, unit and integration tests against real Heat
	$(GO) test -count=1 -timeout 60m -p $(TEST_PARALLEL) ./tests/molecule/ ./tests/realtht/ ./...

parity-zed: check-go ## config_download vs tripleo-common stable/zed's own code on the sample overcloud; fails when no zed tree is found (README)
	EPHEMERAL_HEAT_REQUIRE_ZED=1 $(GO) test -count=1 -run '^TestZedSampleOvercloudParity$$' ./tests/tripleocommon/

bench: deps check-go install ## benchmarks vs baselines, same run (about 2 h 15 min in full with the default scale counts, most of it the stock real-THT side): bench/results.md and bench/results.json; BENCH_ARGS='-only launch'
	$(GO) run ./bench/runner $(BENCH_ARGS)

demo: deps install ## deploy the standalone sample overcloud here (native Heat, sqlite, deploy steps), relaunch Heat on its dump for openstack stack list, stop it
	@scripts/demo.sh

lint: check-go stage ## gofmt, go vet (both ways), go mod tidy, changelog, README's Go, ansible-lint, make sanity
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	@# what a plain `go vet ./...` sees: cgo on, no tags (make deps installs the C headers)
	CGO_ENABLED=1 GOFLAGS= $(GO) vet ./...
	@# go.mod and go.sum as `go mod tidy` leaves them (direct dependencies listed as direct)
	$(GO) mod tidy -diff
	$(GO) run ./tools/changelog -check
	@grep -q "Go ≥ $(GO_MIN) " README.md || { echo "README.md must say Go ≥ $(GO_MIN) (go.mod's go line)"; exit 1; }
	@# at the root, as a user runs it: ansible.cfg resolves ephemeral.heat to this checkout
	env -u ANSIBLE_COLLECTIONS_PATH ansible-lint --nocolor
	@$(MAKE) --no-print-directory sanity-run

# ansible-test sanity tests skipped by `make sanity`, each because it builds a venv and
# fetches pip (and its requirements) from the internet; what covers each instead:
# yamllint: scripts/sanity.sh runs ansible-test's own yamllinter.py and configs with
#   Debian's yamllint, on the YAML files and the sidecar docs' EXAMPLES.
SANITY_SKIP := yamllint
# runtime-metadata: scripts/sanity.sh runs ansible-test's own runtime-metadata.py with
#   Debian's python3-voluptuous on meta/runtime.yml.
SANITY_SKIP += runtime-metadata
# import: imports Python modules, module_utils and plugins; the modules are binaries, and
#   internal/heatloc's test imports plugins/plugin_utils/heat_location.py (the action plugins'
#   code) with Debian's ansible-core and runs it; tests/integration runs the action plugins.
SANITY_SKIP += import
# validate-modules: ansible-core 2.14 reads modules as Python text and does not check
#   binary ones; modules/*/main_test.go check each sidecar against the module's spec (and its
#   attributes and markup), tests/ansibledoc ansible-doc 2.14's page of every installed module
#   and tests/integration TestHelpMatchesDocs the --help of every built binary.
SANITY_SKIP += validate-modules
# pep8: on the Python files (the doc fragment, the action plugins); scripts/sanity.sh runs Debian's pycodestyle
#   with ansible-test's own settings (its ignore list, lines up to 160).
SANITY_SKIP += pep8
# pylint: on the Python files (the doc fragment, the action plugins); ansible-test's compile
#   test (run), the pep8 cover above and the import cover check them.
SANITY_SKIP += pylint
# action-plugin-docs: wants each action plugin to share its name with a module, but counts
#   .py modules only; scripts/sanity.sh checks that each plugins/action/NAME.py has the sidecar
#   documentation plugins/modules/NAME.yml of the binary module NAME.
SANITY_SKIP += action-plugin-docs
# changelog: antsibull-changelog lint; `make lint` runs tools/changelog -check, which
#   validates changelog.yaml and the fragments and that CHANGELOG.rst is up to date.
SANITY_SKIP += changelog

sanity: stage ## ansible-test sanity --local on the staged collection, offline (skips and their cover: Makefile)
	@$(MAKE) --no-print-directory sanity-run

sanity-run:
	@SANITY_SKIP="$(SANITY_SKIP)" scripts/sanity.sh build/stage

# make changelog / make release: RELEASE_DATE=YYYY-MM-DD dates a new release (default: the day of
# SOURCE_DATE_EPOCH if set, else today, UTC); UPDATE_EXISTING=1 folds waiting fragments into
# galaxy.yml's version although it is released (only the newest release, and only untagged).
CHANGELOG_FLAGS := $(if $(RELEASE_DATE),-date $(RELEASE_DATE)) $(if $(UPDATE_EXISTING),-update-existing)

changelog: check-go ## collection/CHANGELOG.rst from changelogs/ (releases galaxy.yml's version first if it is new; refuses a released one with fragments waiting)
	$(GO) run ./tools/changelog $(CHANGELOG_FLAGS)

release: check-go ## on a clean tree: make changelog, then, once that is committed (run it again), tag HEAD v<version>
	$(GO) run ./tools/changelog -tag $(CHANGELOG_FLAGS)

clean: ## remove build outputs
	rm -rf build dist .collections
	@for m in $(MODULES); do rm -f $(COLL_DIR)/plugins/modules/$$m; done
