# The two commands of the README: `make lab` and `make test`. Each sets everything up first;
# set-up is idempotent (stamp files) and quick the second time. `make check` is the edit loop
# between commits (the unit and contract tests, minutes); `make test` stays the gate.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8888
CACHE  := .cache
PYTEST_ARGS ?=
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
LAB_ARGS ?=
# Jupyter refuses to run as root unless told (containers, CI): say so only there.
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: setup lab test check suite-time notebooks lint format djl browser libtorch widgets-js lite clean warm slides lock

# The environment first; then the steps that only need it (the DJL jars, the browser, the
# LibTorch build, the widget bundle, the warm caches), side by side on JOBS processes.
SETUP_STEPS := djl browser libtorch widgets-js warm
setup: $(VENV)/.installed
	@$(MAKE) --no-print-directory -j$(JOBS) $(SETUP_STEPS)

# Every package at the lock's version (constraints.txt): the versions every comparison with the
# shipped records assumes. uv (itself pinned) installs them, downloading and unpacking in
# parallel, faster than pip for the same packages; pip does it where uv cannot. Nothing is
# byte-compiled at install (13,000 files, most never imported): Python compiles and caches
# what is imported, the first time it is. `make lock` writes the lock again from a fresh
# environment.
PIP_INSTALL := --no-compile -c constraints.txt -e '.[all]'
$(VENV)/.installed: pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt uv
	$(BIN)/python -m uv pip install --python $(BIN)/python --native-tls -q $(PIP_INSTALL) || \
	  { echo "uv could not install the environment: pip installs it instead"; \
	    $(BIN)/python -m pip install -q --upgrade pip && \
	    $(BIN)/python -m pip install -q $(PIP_INSTALL); }
	@touch $@

# The lock again: the newest versions pyproject.toml allows, resolved in a fresh environment
# and frozen into constraints.txt; then the whole suite runs on them.
lock:
	rm -rf $(CACHE)/lock-venv
	$(PYTHON) -m venv $(CACHE)/lock-venv
	$(CACHE)/lock-venv/bin/python -m pip install -q --upgrade pip
	$(CACHE)/lock-venv/bin/python -m pip install -q -e '.[all]'
	{ sed -n '1,2p' constraints.txt; $(CACHE)/lock-venv/bin/python -m pip freeze \
	  --exclude-editable | sort -f; } > constraints.txt.new && mv constraints.txt.new constraints.txt
	rm -rf $(CACHE)/lock-venv
	$(MAKE) test

# The pinned DJL jars, resolved by Maven from Maven Central (checksums enforced) into .cache.
djl: $(CACHE)/djl/.resolved

$(CACHE)/djl/.resolved: fpexplore/jvm/pom.xml fpexplore/jvm/Fpx.java $(VENV)/.installed
	$(BIN)/python -m fpexplore setup djl
	@touch $@

# The summation explorer's error-growth curves for every choice and the training-drift study and
# table, computed once into .cache, so that no widget click waits for them (fpexplore warm;
# recomputed when orders or the training-drift lesson change).
warm: $(CACHE)/summation_growth/.warm

$(CACHE)/summation_growth/.warm: $(wildcard fpexplore/orders/*.py) \
  fpexplore/lessons/summation_order/growth.py fpexplore/lessons/summation_order/inputs.py \
  $(wildcard fpexplore/lessons/training_drift/*.py) $(VENV)/.installed
	$(BIN)/python -m fpexplore warm
	@mkdir -p $(@D) && touch $@

# Chromium from Debian's packages for the browser tests: Playwright (dev extra) drives
# /usr/bin/chromium, no browser is downloaded. apt runs only when the browser is missing.
browser: $(CACHE)/.chromium

$(CACHE)/.chromium:
	@mkdir -p $(CACHE)
	@test -x /usr/bin/chromium || { $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; }
	@touch $@

# The LibTorch (C++) comparison program, built with CMake against the torch wheel's libtorch
# into .cache/libtorch; rebuilt only when its sources change. Without cmake or a C++ compiler it
# says what to install and set-up goes on (the lesson then reports it as unavailable).
LIBTORCH_SRC := $(wildcard fpexplore/backends/libtorch/*.cpp fpexplore/backends/libtorch/*.py) \
  fpexplore/backends/libtorch/CMakeLists.txt
libtorch: $(CACHE)/libtorch/.built

$(CACHE)/libtorch/.built: $(LIBTORCH_SRC) $(VENV)/.installed
	$(BIN)/python -m fpexplore setup libtorch --stamp $@

# The widget manager bundle that exported pages inline (pinned, integrity-checked, from npm).
widgets-js: $(CACHE)/widgets/.fetched

$(CACHE)/widgets/.fetched: fpexplore/widget_bundle.py $(VENV)/.installed
	$(BIN)/python -m fpexplore setup widgets
	@touch $@

# The workshop kit into build/workshop: a handout and facilitator notes per notebook (from the
# notebooks and the recorded runs) and each lesson's page from `fpexplore export` as its slides,
# with an index (build/workshop/index.html). Without --slides it takes a second.
slides: $(VENV)/.installed
	$(BIN)/python -m fpexplore workshop --slides --out build/workshop

# The JupyterLite site (numpy/mpmath lessons in the browser, Pyodide from its CDN): build/lite.
lite: setup
	$(BIN)/python lite/build.py

lab: setup
	$(BIN)/jupyter lab --no-browser --ip=$(HOST) --port=$(PORT) \
	  --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks $(ROOT_ARGS) $(LAB_ARGS)

# Every notebook is executed by the suite once: in JupyterLab in Chromium, with kernels from the
# Binder replay's environment (tests/binder_env.py), each kernel measured against Binder's memory
# limit as it runs (tests/test_browser_notebooks.py). `make notebooks` runs them once more,
# plainly, under nbmake.
#
# The suite runs on JOBS processes (pytest-xdist; at most 4, one per core): a test module, or a
# group of modules sharing a fixture, is one unit of work, the longest first
# (tests/suite_parallel.py). JOBS=0 runs it in this process alone.
#
# Fresh processes (fingerprints under each switch, the claims matrix's runs) are kept in
# .cache/fresh, keyed by their environment, the CPU, every installed version and the code's
# hash, so a second run reuses what nothing changed; and a test marked `reusable` that passed
# on the same tree (git's files, hashed) and machine is reported passed without running again.
# The summary lists both; FPEXPLORE_FRESH_CACHE=0 and FPEXPLORE_REUSE=0 turn them off.
test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests -n $(JOBS) --durations=30 --junitxml=$(CACHE)/suite/test.xml \
	  $(PYTEST_ARGS)

# The edit loop: lint, then every test but the browser's, the Binder replay, the claims matrix
# and the rest of the slow tier (markers in pyproject.toml). `make test` runs them all.
CHECK_MARKERS ?= not slow and not browser
check: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests -n $(JOBS) -m "$(CHECK_MARKERS)" --durations=15 \
	  --junitxml=$(CACHE)/suite/check.xml $(PYTEST_ARGS)

# The suite's time by tier (marker) and its 20 slowest tests, from the last run's JUnit XML.
suite-time:
	$(BIN)/python benchmarks/suite_time.py --junit $(CACHE)/suite/test.xml

notebooks: setup
	$(BIN)/python -m pytest notebooks --nbmake --nbmake-timeout=600 $(PYTEST_ARGS)

lint:
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(CACHE)
