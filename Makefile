# mrsparse: every target sets up what it needs; `make test` on a fresh machine does it all.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install test test-fast run bench lint clean vectors

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) setup.cfg setup.py pyproject.toml codecs/mrcodecs/_speedups.c
	$(PY) -m pip install -q -e '.[test,bench,examples]'
	touch $@

install: $(STAMP)

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

run: install
	$(PY) -m examples.strongest_pairs

bench: install
	$(PY) -m bench.wire

lint: install
	$(PY) -m pyflakes mrjobs codecs/mrcodecs tests examples bench 2>/dev/null || $(PY) -m compileall -q mrjobs codecs/mrcodecs tests examples bench

vectors: install
	$(PY) codecs/vectors/make_vectors.py

clean:
	rm -rf $(VENV) .cache build *.egg-info .pytest_cache .hypothesis _mrcodecs_speedups*.so
	find . -name __pycache__ -prune -exec rm -rf {} +
