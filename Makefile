# mrsparse: every target sets up what it needs; `make test` on a fresh machine does it all.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install engines cluster test test-fast run bench lint clean vectors

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) setup.cfg setup.py pyproject.toml codecs/mrcodecs/_speedups.c
	$(PY) -m pip install -q -e '.[test,bench,examples,spark,emr]'
	touch $@

install: $(STAMP)

# Real Hadoop Streaming runs on pyspark's Hadoop client jars (installed above)
# plus the hadoop-streaming jar from Maven Central, cached in .cache/engines;
# the test cluster (HDFS + YARN) on hadoop-minicluster's jars from Maven Central
# (.cache/engines/cluster, with its stop-on-signal wrapper compiled by javac).
engines: install
	tests/engines/fetch-jars.sh

# a pseudo-distributed Hadoop (HDFS + YARN, 2 NodeManagers) in the foreground
# until Ctrl-C; prints how to point mrjob at it
cluster: engines
	$(PY) -m tests.engines.cluster

test: install engines
	$(PY) -m pytest $(PYTEST_ARGS)

# everything but the real engines (Hadoop, Spark, EMR mock): a quick loop while coding
test-fast: install
	$(PY) -m pytest -m "not engines" $(PYTEST_ARGS)

run: install
	$(PY) -m examples.strongest_pairs

bench: install
	$(PY) -m bench.wire
	$(PY) -m bench.jobs

lint: install
	$(PY) -m pyflakes mrjobs codecs tests examples bench setup.py

vectors: install
	$(PY) codecs/vectors/make_vectors.py

clean:
	rm -rf $(VENV) .cache build *.egg-info .pytest_cache .hypothesis _mrcodecs_speedups*.so
	find . -name __pycache__ -prune -exec rm -rf {} +
