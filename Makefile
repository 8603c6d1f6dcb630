# The two commands of the README: `make lab` and `make test`. Each sets everything up first;
# set-up is idempotent (stamp files) and quick the second time.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8888
CACHE  := .cache
PYTEST_ARGS ?=
LAB_ARGS ?=
# Jupyter refuses to run as root unless told (containers, CI): say so only there.
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: setup lab test notebooks lint format djl browser libtorch widgets-js lite clean warm slides lock

setup: $(VENV)/.installed djl browser libtorch widgets-js warm

# Every package at the lock's version (constraints.txt): the versions every comparison with the
# shipped records assumes. `make lock` writes the lock again from a fresh environment.
$(VENV)/.installed: pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[all]'
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

# The summation explorer's error-growth curves for every choice, computed once into .cache, so
# that no widget click waits for them (fpexplore warm; recomputed when orders change).
warm: $(CACHE)/summation_growth/.warm

$(CACHE)/summation_growth/.warm: $(wildcard fpexplore/orders/*.py) \
  fpexplore/lessons/summation_order/growth.py fpexplore/lessons/summation_order/inputs.py \
  $(VENV)/.installed
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

# Every notebook is executed by the suite twice: in JupyterLab in Chromium
# (tests/test_browser_notebooks.py) and in the Binder replay's fresh environment
# (tests/test_binder_replay.py). `make notebooks` runs them once more, plainly, under nbmake.
test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests --durations=30 $(PYTEST_ARGS)

notebooks: setup
	$(BIN)/python -m pytest notebooks --nbmake --nbmake-timeout=600 $(PYTEST_ARGS)

lint:
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(CACHE)
