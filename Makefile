# `make demo` and `make test` work on a fresh machine: they create .venv, install the
# Python dependencies listed in pyproject.toml, build the Rust extension in release
# mode into the venv, and run. Steps are redone only when their inputs change.

VENV    := .venv
PYTHON  := $(VENV)/bin/python
DEPS    := $(VENV)/.deps-installed
# What `maturin develop` builds (into the source tree, next to the Python modules).
BUILT   := python/aqmlab/_core.abi3.so
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

export MPLBACKEND := Agg
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: demo test lint test-rust test-python test-wheel fuzz-long build bench bench-qdiscs ns2 ns2-reference clean-venv ns2-reproductions ns2-baselines linux-reference linux-l4s-reference linux-emulated

# `reproduce` exits 1 when a paper row fails (its measured reason is printed): the demo
# has still run. Any other status is an error.
demo: $(BUILT)
	@$(VENV)/bin/aqmlab reproduce demo --out out/demo; status=$$?; [ $$status -le 1 ]

# Runs the formatters' checks, lint, both suites and the wheel check even when one fails;
# fails if any failed. ns-2 is installed first when it can be (tests/test_ns2.py runs a few
# cases in it when `ns` is there; the comparison with its recorded numbers runs either way).
test: $(BUILT)
	@status=0; \
	$(MAKE) --no-print-directory ns2; \
	$(MAKE) --no-print-directory lint || status=1; \
	cargo test -p aqmlab-core --release || status=1; \
	$(PYTHON) -m pytest -q || status=1; \
	$(MAKE) --no-print-directory test-wheel || status=1; \
	exit $$status

# rustfmt and ruff decide formatting; clippy and ruff lint. Fix formatting with
# `cargo fmt --all` and `.venv/bin/ruff format python tests`.
lint: $(DEPS)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --release --quiet -- -D warnings
	$(VENV)/bin/ruff format --check python tests
	$(VENV)/bin/ruff check python tests

# ns-2.35 (`ns`), the simulator the papers ran (docs/ns2.md): installed with apt-get when
# this runs as root on a Debian or Ubuntu system; otherwise a line says it is missing. Never fails.
ns2:
	@command -v ns >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing ns-2 (apt-get install ns2)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null 2>&1; } || \
	    echo "ns-2 could not be installed: the ns-2 tests run on the recorded numbers only"; \
	  else \
	    echo "ns-2 not installed (apt-get install ns2): the ns-2 tests run on the recorded numbers only"; \
	  fi; }

# Runs every `aqmlab validate ns2` scenario in ns-2 and records its numbers, with ns-2's version
# and the date, in python/aqmlab/ns2/reference.json (about 25 s). Run it when the exporter or a
# scenario changes (`validate ns2` then reports the case stale).
ns2-reference: $(BUILT) ns2
	$(PYTHON) -m aqmlab.ns2.validate --record

# Linux's numbers for `aqmlab validate linux` (docs/linux.md): every cell (8 qdiscs × reno, cubic,
# bbr) three times and the two BBR-against-CUBIC pairs five times in Linux 6.1 under User-Mode Linux,
# one run at a time (about 1.5 hours; runs are kept under /var/tmp/aqmlab-linux-reference and
# resumed), written to python/aqmlab/linux/reference.json with the kernel, the date and the host's load. UML is installed with apt-get when this runs as root.
linux-reference: $(BUILT)
	@[ -x /usr/bin/linux.uml ] && command -v iperf3 >/dev/null && command -v modprobe >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq user-mode-linux iperf3 ethtool kmod >/dev/null; \
	  else \
	    echo "linux-reference: needs user-mode-linux, iperf3, ethtool and kmod (apt-get install ...)" >&2; exit 2; \
	  fi; }
	$(PYTHON) -m aqmlab.linux.reference --record
	$(PYTHON) -m aqmlab.linux.reference --record --pairs

# The L4S cells of `validate linux` (issue 37): DualPI2 and FQ-CoDel's ce_threshold under DCTCP, five
# runs each (about 20 minutes, kept under /var/tmp/aqmlab-l4s-reference and resumed), on the UML kernel
# that tools/l4s_kernel/build.sh builds (by hand, once: tools/l4s_kernel/README.md), written to
# python/aqmlab/linux/l4s.json with the kernel, the date and the host's load.
linux-l4s-reference: $(BUILT)
	@[ -x "$${AQMLAB_L4S_KERNEL:-/work/l4s-kernel}/linux.uml" ] || { \
	  echo "linux-l4s-reference: no L4S kernel; build it: tools/l4s_kernel/build.sh (tools/l4s_kernel/README.md)" >&2; exit 2; }
	$(PYTHON) -m aqmlab.linux.reference --record --l4s

# `validate emulate`'s emulated column: every Linux cell emulated (`aqmlab emulate`: this machine's
# Linux TCP through aqmlab's qdisc twin) three times, 30 s each (about half an hour; root), kept under
# /var/tmp/aqmlab-linux-emulated and resumed, written to python/aqmlab/linux/emulated.json.
linux-emulated: $(BUILT)
	@[ "$$(id -u)" = 0 ] || { echo "linux-emulated: needs root (aqmlab emulate makes network namespaces)" >&2; exit 2; }
	$(PYTHON) -m aqmlab.linux.emulated --record

test-rust:
	cargo test -p aqmlab-core --release

test-python: $(BUILT)
	$(PYTHON) -m pytest -q

# The package as a user installs it: builds the wheel, installs it into a fresh venv without
# extras and runs the README's commands from outside the checkout (about 130 s: maturin builds
# the wheel's release extension again, the runs take about 30 s).
test-wheel: $(DEPS)
	$(PYTHON) tests/check_wheel.py

# The long fuzz runs, for before a release (docs/scenario.md, "Limits and errors"): 10 000
# Hypothesis cases on the Python side (about 2 minutes), 100 000 mutated scenarios on the
# Rust side (about 15 seconds).
fuzz-long: $(BUILT)
	HYPOTHESIS_PROFILE=long $(PYTHON) -m pytest -q tests/test_fuzz.py
	AQMLAB_FUZZ_CASES=100000 cargo test -p aqmlab-core --release --test fuzz -- --nocapture

build: $(BUILT)

# The reproductions' ns-2 column (docs/ns2-reproductions.md): runs the RED-PD authors' scripts from
# an ns-2.35 source tree in ns-2, then the CSFQ experiments' baselines (ns2-baselines), and rewrites
# python/aqmlab/experiments/ns2_reference/*.json. Needs `ns` on PATH and NS2_SRC; about an hour
# and a half on two cores. NS2_WORK=DIR keeps the RED-PD runs and resumes.
ns2-reproductions: ns2-baselines
	@[ -n "$(NS2_SRC)" ] || { echo "ns2-reproductions: set NS2_SRC to an ns-2.35 source tree, e.g. make ns2-reproductions NS2_SRC=~/ns-allinone-2.35/ns-2.35" >&2; exit 2; }
	NS2_SRC="$(NS2_SRC)" python3 tools/ns2_reproductions/redpd.py $(if $(NS2_WORK),--work "$(NS2_WORK)")
	NS2_SRC="$(NS2_SRC)" PYTHONPATH=python $(PYTHON) tools/ns2_reproductions/suite.py

# The CSFQ experiments' FIFO, RED and DRR rows, the BRED experiments' RED rows and, as a reference,
# FRED's in ns-2: their scenarios written by aqmlab's own exporter (`aqmlab export ns2`), run in
# `ns` (about 45 minutes on two cores).
ns2-baselines: $(BUILT)
	@command -v ns >/dev/null || { echo "ns2-reproductions: ns (ns-2.35) is not on PATH; install it (Debian, Ubuntu: apt-get install ns2)" >&2; exit 2; }
	$(PYTHON) tools/ns2_reproductions/baselines.py

bench: $(BUILT)
	$(VENV)/bin/aqmlab bench

# The cost of each queue discipline: benchmark (a) under every preset of `aqmlab compare`.
bench-qdiscs: $(BUILT)
	$(VENV)/bin/aqmlab bench --only demo-red --mechanisms all --repeat 3

$(PYTHON):
	python3 -m venv $(VENV)

# Dependencies come from pyproject.toml ([project] dependencies + the `dev` extra).
$(DEPS): pyproject.toml | $(PYTHON)
	$(PYTHON) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["dev"]))' > $(VENV)/requirements.txt
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r $(VENV)/requirements.txt
	touch $@

# `maturin develop` installs the package in editable mode: the Python sources under
# python/ are used in place, so only Rust changes need a rebuild.
$(BUILT): $(DEPS) $(RUST_SOURCES) pyproject.toml
	$(VENV)/bin/maturin develop --release --quiet > /dev/null  # stdout is only pip's "already satisfied" list
	touch $@

clean-venv:
	rm -rf $(VENV)
