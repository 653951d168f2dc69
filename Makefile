# fabric: the two commands are `make demo` and `make test`; both set up what they need.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
FABRIC := $(VENV)/bin/fabric
APT_PACKAGES := openssh-server openssh-client lldpd iperf3 ethtool iputils-ping iproute2 \
                graphviz chromium procps psmisc openssl netplan.io sudo
DEMO_LAB ?= demo

.PHONY: setup apt venv venv-test bytecode lab-tools demo test test-fast lint clean

setup: apt venv lab-tools bytecode

apt:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing apt packages:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# chrony for the lab's time server and the Sparks' `chronyd -x`, unpacked, never installed:
# Debian's chrony package would replace this machine's own time service.
CHRONY_DIR := .lab-tools/chrony
PROMETHEUS_DIR := .lab-tools/prometheus
lab-tools: $(CHRONY_DIR)/usr/sbin/chronyd $(PROMETHEUS_DIR)/usr/bin/promtool

# Unpack Debian package $(1) into .lab-tools/$(1) (downloaded, never installed).
define unpack_deb
	mkdir -p .lab-tools/debs
	cd .lab-tools/debs && rm -f $(1)_*.deb && \
	  { apt-get download $(1) >/dev/null 2>&1 || \
	    { apt-get update -qq && apt-get download $(1) >/dev/null; }; }
	rm -rf .lab-tools/$(1) && dpkg-deb -x .lab-tools/debs/$(1)_*.deb .lab-tools/$(1)
endef

$(CHRONY_DIR)/usr/sbin/chronyd:
	$(call unpack_deb,chrony)
	test -x $@

# Prometheus and promtool for the watch tests, unpacked, never installed: Debian's prometheus
# package would start a server on this machine's own network (port 9090).
$(PROMETHEUS_DIR)/usr/bin/promtool:
	$(call unpack_deb,prometheus)
	test -x $@ && test -x $(PROMETHEUS_DIR)/usr/bin/prometheus

venv: $(VENV)/.installed

# What validation needs, nothing more (no torch): `make demo`.
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

# The checkout's bytecode, as an installed wheel has it: an editable install compiles
# nothing, and where PYTHONDONTWRITEBYTECODE is set every `fabric` command would compile the
# toolkit again (about 0.08 s of each start-up). Only stale files are compiled. Then the
# dataclasses' generated methods, compiled once beside the bytecode (fabric/dataclass_cache.py;
# about 0.1 s of each start-up).
bytecode: venv
	$(PY) -m compileall -q fabric validators
	$(PY) -c 'from fabric.dataclass_cache import warm; warm()'

# The tests and lint, and torch 2.13 for the launch rehearsal (extra `rehearse`): `make test`.
venv-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test,rehearse]'
	touch $@

demo: setup
	$(FABRIC) topo check ring4
	$(FABRIC) topo check star4
	$(FABRIC) topo check star8
	$(FABRIC) topo check star16
	$(FABRIC) topo show star4
	./scripts/demo.sh $(DEMO_LAB)

# pytest-xdist: the lab tests run in order on one worker, the unit tests beside them
# (tests/conftest.py schedules them).
test: setup venv-test
	$(PY) -m pytest -q -n auto

# Everything but the lab twin (no root, no namespaces): a quick loop while editing.
test-fast: apt venv-test bytecode
	$(PY) -m pytest -q -n auto -m "not lab"

lint: apt venv-test
	$(VENV)/bin/ruff check fabric validators tests
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info .lab-tools
