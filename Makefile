# mrsparse: every target sets up what it needs; `make test` on a fresh machine does it all.
# Each stage prints one line "make: ..."; the commands themselves are not echoed.

# python3.X that runs: on PATH, else the newest pyenv install of it in
# $PYENV_ROOT (default ~/.pyenv; a pyenv shim of a version that is not active
# does not run)
PYENV_DIR := $(or $(PYENV_ROOT),$(HOME)/.pyenv)
find_python = $(firstword $(foreach c,python$(1) $(lastword $(sort $(wildcard \
	$(PYENV_DIR)/versions/$(1).*/bin/python$(1)))),$(shell $(c) -c 'print("$(c)")' 2>/dev/null)))

PYTHON ?= $(or $(call find_python,3.11),python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install hadoop engines cluster test test-all test-unit test-fast test-purepython test-versions test-asan run bench docs lint clean vectors FORCE

# .venv belongs to the Python it was built with: when PYTHON is another one
# (make test PYTHON=python3.12), .venv is rebuilt rather than silently reused.
PY_ID := import sys; print(sys.implementation.name, sys.version.split()[0], sys.base_prefix)
PYTHON_ID := $(shell $(PYTHON) -c '$(PY_ID)' 2>/dev/null)
ifeq ($(PYTHON_ID),)
# PYTHON=python3.13 that does not run resolves as the Python 3.13 tests find theirs
PYTHON_FOUND := $(call find_python,$(patsubst python%,%,$(notdir $(PYTHON))))
ifneq ($(PYTHON_FOUND),)
$(info make: PYTHON=$(PYTHON) does not run; using $(PYTHON_FOUND))
override PYTHON := $(PYTHON_FOUND)
PYTHON_ID := $(shell $(PYTHON) -c '$(PY_ID)' 2>/dev/null)
endif
endif
VENV_ID := $(shell test -x $(PY) && $(PY) -c '$(PY_ID)' 2>/dev/null)
ifeq ($(PYTHON_ID),)
$(error PYTHON=$(PYTHON) does not run)
endif
ifneq ($(VENV_ID),)
ifneq ($(VENV_ID),$(PYTHON_ID))
$(info make: $(VENV) was built with $(VENV_ID); PYTHON=$(PYTHON) is $(PYTHON_ID): rebuilding $(VENV))
$(shell rm -rf $(VENV))
endif
endif

# The codec and job tests once more under the Python twins of the C
# extensions (mrcodecs's pure-Python twin, mrjobs's numpy pair kernel: both
# extensions stay installed; MRCODECS_PUREPYTHON=1 bypasses them), jobs on
# the inline runner (tasks on the local runner with a numpy-only Python use
# the twins in every run already): the tests marked `twin`.
#
# A fast part of the suite on the other supported Pythons, each in its own
# venv (.venv-3.12, ...) with the C extension built there: codecs, parsing,
# and the jobs on the inline and local runners: the tests marked `versions`
# (none is in tests/bench or tests/engines, whose modules import the bench and
# engine extras, which these venvs do not install: those folders are not collected).
# (The markers are registered in setup.cfg; a test file names its own.)
VERSIONS := 3.12 3.13

$(PY):
	@echo "make: creating $(VENV) with $(PYTHON) (Python $(word 2,$(PYTHON_ID)))"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip

# the C extensions' sources: a change to one rebuilds them (mrjobs/csrc/: one
# extension, a file a concern)
C_SOURCES := codecs/mrcodecs/_speedups.c $(wildcard mrjobs/csrc/*.c mrjobs/csrc/*.h)

# (the C extension and the egg-info are built in src/; an older layout had them at the top)
$(STAMP): $(PY) setup.cfg setup.py pyproject.toml $(C_SOURCES)
	@echo "make: installing mrsparse (editable) and its test, bench, examples, notebook, spark, emr and docs extras into $(VENV)"
	@rm -rf _mrcodecs_speedups*.so mrsparse.egg-info
	@$(PY) -m pip install -q -e '.[test,bench,examples,notebook,spark,emr,docs]'
	@$(PY) -c 'import mrcodecs._impl as i; i.SPEEDUPS or print("\nWARNING: mrcodecs runs on its pure-Python twin: " + i.REASON + "\n")'
	@$(PY) -c 'import mrjobs._c as c; c.C or print("\nWARNING: mrjobs runs on the numpy twins of its C kernels: " + c.REASON + "\n")'
	@touch $@

install: $(STAMP)

# what `make run` needs: mrsparse and its runtime dependencies (mrjob, numpy,
# scipy) plus the examples' progress bar; no test, engine or bench extras
RUN_STAMP := $(VENV)/.installed-run
$(RUN_STAMP): $(PY) setup.cfg setup.py pyproject.toml $(C_SOURCES)
	@echo "make: installing mrsparse (editable) and its runtime dependencies into $(VENV)"
	@rm -rf _mrcodecs_speedups*.so mrsparse.egg-info
	@$(PY) -m pip install -q -e '.[examples]'
	@touch $@

# Real Hadoop Streaming in local mode runs on Hadoop's client jars plus the
# hadoop-streaming jar, from Maven Central, cached in .cache/engines (client/,
# 54 MB); `make hadoop` is that and mrsparse's runtime dependencies alone (no
# pyspark, no cluster). `make engines` adds the test cluster (HDFS + YARN) on
# hadoop-minicluster's jars from Maven Central (.cache/engines/cluster, with its
# stop-on-signal wrapper compiled by javac) and, with `make install`, pyspark.
hadoop: $(RUN_STAMP)
	@echo "make: Hadoop's client and streaming jars in .cache/engines (fetched from Maven Central the first time)"
	@MRSPARSE_NO_CLUSTER=1 tests/engines/fetch-jars.sh >/dev/null

engines: install
	@echo "make: the engines' jars in .cache/engines (fetched from Maven Central the first time)"
	@tests/engines/fetch-jars.sh >/dev/null

# a pseudo-distributed Hadoop (HDFS + YARN, 2 NodeManagers) in the foreground
# until Ctrl-C; prints how to point mrjob at it
cluster: engines
	$(PY) -m tests.engines.cluster

# Which tests run (markers in setup.cfg, their rules in tests/conftest.py):
# `make test` the unit tests and the `smoke` ones of the slow tests (one real
# run for each runner, engine and input path: Hadoop local mode, an HDFS +
# YARN cluster, Spark); `make test-all` every test (33 min here, against 9);
# `make test-unit` the unit tests alone (-m "not slow", under a minute).
SELECTED := not slow or smoke
MARKS ?= $(SELECTED)

test: install engines
	@echo "make: the tests -m \"$(MARKS)\" (the unit and smoke tests unless make test-all), with Hadoop, an HDFS + YARN cluster and Spark (the longest stage)"
	@$(PY) -m pytest -m "$(MARKS)" $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory test-purepython MARKS="$(MARKS)"
	@$(MAKE) --no-print-directory test-versions MARKS="$(MARKS)"

# every test: make test with the slow ones all in
test-all: MARKS := slow or not slow
test-all: test

test-unit: install
	@echo "make: the unit tests"
	@$(PY) -m pytest -m "not slow" $(PYTEST_ARGS)

# the suite without the real engines (no Java, no jars needed)
test-fast: install
	@echo "make: the test suite without the real engines"
	@$(PY) -m pytest -m "not engines and ($(MARKS))" $(PYTEST_ARGS)

test-purepython: install
	@echo "make: the codec and job tests on the Python twins of the C extensions"
	@MRCODECS_PUREPYTHON=1 $(PY) -m pytest -m "twin and not engines and ($(MARKS))" -k "not local" $(PYTEST_ARGS)

# The tests of both C extensions (the pair kernels, the JSON output, the
# codecs, and the dot-products job on the inline runner, whose tasks run in
# pytest's process: the rows step's merge and the JSON writer on the rows the
# wire gives, at any address) on builds with AddressSanitizer and UBSan
# (alignment included: -fsanitize=undefined), in .cache/asan (first on
# PYTHONPATH; .venv's builds are untouched); python itself is not built with
# ASan, so its runtime is preloaded.  pytest captures sys.stdout/err only: a
# sanitizer writes its report to file descriptor 2 and halts, which pytest's
# default capture would swallow.  Not part of `make test`.
ASAN_DIR := .cache/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_ENV = LD_PRELOAD=$$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# (the tests marked `asan`)

test-asan: install
	@echo "make: the C extensions' tests on builds with ASan + UBSan (in $(ASAN_DIR))"
	@rm -rf $(ASAN_DIR)
	@$(ASAN_ENV) CC=gcc CFLAGS="$(ASAN_FLAGS) -O1 -g" LDFLAGS="$(ASAN_FLAGS)" \
		$(PY) setup.py -q build_ext --build-lib $(ASAN_DIR) --build-temp $(ASAN_DIR)/tmp
	@PYTHONPATH=$(ASAN_DIR) $(ASAN_ENV) $(PY) -c 'import os, _mrcodecs_speedups as a, \
		_mrjobs_speedups as b; d = os.path.abspath("$(ASAN_DIR)"); \
		assert all(os.path.dirname(m.__file__) == d for m in (a, b)), (a, b)'
	@PYTHONPATH=$(ASAN_DIR) $(ASAN_ENV) $(PY) -m pytest -p no:cacheprovider --capture=sys \
		-m "asan and not engines" $(PYTEST_ARGS)

$(foreach v,$(VERSIONS),$(eval PYTHON_$(v) ?= $$(call find_python,$(v))))

.venv-%/.installed: setup.cfg setup.py pyproject.toml $(C_SOURCES)
	@echo "make: creating .venv-$* with $(PYTHON_$*) and installing mrsparse and its test extras"
	@rm -rf .venv-$*
	@$(PYTHON_$*) -m venv .venv-$*
	@.venv-$*/bin/python -m pip install -q --upgrade pip
	@.venv-$*/bin/python -m pip install -q -e '.[test]'
	@.venv-$*/bin/python -c 'import mrcodecs._impl as i; assert i.SPEEDUPS, i.REASON'
	@touch $@

test-versions: $(foreach v,$(VERSIONS),test-python-$(v))

# a pattern rule (make skips pattern rules for .PHONY targets): FORCE runs it
test-python-%: FORCE
	@if [ -z "$(PYTHON_$*)" ]; then \
	  echo "make: SKIPPED the Python $* tests: no python$* here (nor in $(PYENV_DIR)/versions)"; \
	else \
	  $(MAKE) --no-print-directory .venv-$*/.installed PYTHON_$*=$(PYTHON_$*) && \
	  echo "make: Python $* tests in .venv-$*" && \
	  .venv-$*/bin/python -m pytest -p no:cacheprovider -m "versions and ($(MARKS))" \
	    --ignore=tests/bench --ignore=tests/engines $(PYTEST_ARGS); \
	fi

run: $(RUN_STAMP)
	@$(PY) -m examples.strongest_pairs

# (with bytecode caching on, as a user's runs have it: PYTHONDONTWRITEBYTECODE
# would make every task process compile mrsparse's modules again)
# (bench.jobs runs the peers' scripts end to end on every corpus; bench.peers
# --kernel-only adds the kernel against the peers on one block; BENCH_QUICK=1
# runs every benchmark small; python -m bench.peers --quick is the peers alone,
# end to end and kernel, in about a minute)
# every benchmark runs; one whose targets are not all met (a FAIL row) leaves
# .bench-missed, and make bench exits 1 at the end naming them
BENCH = env -u PYTHONDONTWRITEBYTECODE $(PY) -m
bench: install
	rm -f .bench-missed
	$(BENCH) bench.wire || echo bench.wire >> .bench-missed
	$(BENCH) bench.jobs || echo bench.jobs >> .bench-missed
	$(BENCH) bench.peers --kernel-only || echo bench.peers >> .bench-missed
	$(BENCH) bench.prune || echo bench.prune >> .bench-missed
	$(BENCH) bench.scaleout || echo bench.scaleout >> .bench-missed
	$(BENCH) bench.shorttext || echo bench.shorttext >> .bench-missed
	$(BENCH) bench.longtext || echo bench.longtext >> .bench-missed
	$(BENCH) bench.update || echo bench.update >> .bench-missed
	tests/engines/fetch-jars.sh >/dev/null && ($(BENCH) bench.hadoop || echo bench.hadoop >> .bench-missed)
	$(BENCH) mrjobs.plan --calibrate --calibration mrjobs/plan/calibration.json
	$(BENCH) bench.planner || echo bench.planner >> .bench-missed
	@if [ -e .bench-missed ]; then echo "make bench: targets missed in: $$(tr '\n' ' ' < .bench-missed)"; rm -f .bench-missed; exit 1; fi

# the documentation site (mkdocs.yml, docs/) into .cache/site, every warning an
# error; the docs extra (mkdocs) comes with `make install`
DOCS_DIR := .cache/site

docs: install
	@echo "make: the documentation site in $(DOCS_DIR)"
	@$(PY) -m mkdocs build --strict --quiet --site-dir $(DOCS_DIR)
	@echo "make: open $(DOCS_DIR)/index.html"

lint: install
	$(PY) -m pyflakes mrjobs codecs tests examples bench setup.py

vectors: install
	$(PY) codecs/vectors/make_vectors.py

clean:
	rm -rf $(VENV) .venv-* .cache build *.egg-info src/*.egg-info .pytest_cache .hypothesis \
		_mrcodecs_speedups*.so src/_mrcodecs_speedups*.so
	find . -name __pycache__ -prune -exec rm -rf {} +

FORCE:
