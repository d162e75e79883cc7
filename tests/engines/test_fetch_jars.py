"""fetch-jars.sh checks a downloaded jar for its main class without a pipeline
that SIGPIPE can break: ``unzip -l JAR | grep -q ...`` under ``set -o
pipefail`` failed about 1 run in 15 here (grep -q exits at the first match,
unzip then dies of SIGPIPE and the pipeline reports failure)."""
import os
import subprocess

import pytest

from tests.engines.support import FETCH

pytest_plugins = ["tests.engines.fixtures"]
pytestmark = pytest.mark.engines

MAIN = "org/apache/hadoop/streaming/HadoopStreaming.class"


def check(jar, entry):
    return subprocess.run(["bash", FETCH, "--check-jar", str(jar), entry],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode


def test_jar_check_is_reliable(streaming_jar):
    # the check as fetch-jars.sh runs it on the real jar, 100 times (~2 s)
    results = [check(streaming_jar, MAIN) for _ in range(100)]
    assert results == [0] * 100


def test_jar_check_rejects(streaming_jar, tmp_path):
    assert check(streaming_jar, "org/apache/hadoop/streaming/NoSuchClass.class") == 1
    not_a_jar = tmp_path / "hadoop-streaming.jar"
    not_a_jar.write_text("<html>404 Not Found</html>\n")
    assert check(not_a_jar, MAIN) == 1
    assert check(tmp_path / "missing.jar", MAIN) == 1


def test_maven_output_reaches_the_log_as_plain_text(streaming_jar, tmp_path):
    # Maven 3.8 writes ANSI codes (ESC[0m) even in batch mode; a stand-in mvn
    # that does the same and "downloads" the real jar
    mvn = tmp_path / "mvn"
    mvn.write_text('#!/bin/sh\nprintf "\\033[0m\\033[0m[WARNING] \\033[1;33mslow mirror\\033[0m\\n"\n'
                   'for a; do case "$a" in -DoutputDirectory=*) cp "%s" '
                   '"${a#-DoutputDirectory=}/hadoop-streaming-3.4.2.jar";; esac; done\n'
                   % streaming_jar)
    mvn.chmod(0o755)
    env = dict(os.environ, MVN=str(mvn), MRSPARSE_ENGINES_CACHE=str(tmp_path / "cache"),
               MRSPARSE_NO_CLUSTER="1", HADOOP_STREAMING_VERSION="3.4.2")
    out = subprocess.run(["bash", FETCH], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "[WARNING] slow mirror" in out.stderr
    assert "\x1b" not in out.stderr
    assert out.stdout.strip().endswith("hadoop-streaming.jar")
