"""fetch-jars.sh checks a downloaded jar for its main class without a pipeline
that SIGPIPE can break: ``unzip -l JAR | grep -q ...`` under ``set -o
pipefail`` failed about 1 run in 15 here (grep -q exits at the first match,
unzip then dies of SIGPIPE and the pipeline reports failure).  It keeps
Hadoop's client jars only when they hold Hadoop's classes, and the launcher
names the command that fetches them when they are missing."""
import os
import subprocess

import pytest

from tests.engines.support import CLIENT_LIB, FETCH, LAUNCHER

pytest_plugins = ["tests.engines.fixtures"]
pytestmark = pytest.mark.engines

MAIN = "org/apache/hadoop/streaming/HadoopStreaming.class"


def check(jar, entry):
    return subprocess.run(["bash", FETCH, "--check-jar", str(jar), entry],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode


@pytest.mark.smoke
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


def fake_mvn(path, streaming_jar, warning="", client_jars=CLIENT_LIB):
    """A stand-in mvn that "downloads" the real jars: the streaming jar, or
    for tests/engines/hadoop-client/pom.xml links to those of ``client_jars``."""
    path.write_text('#!/bin/sh\n%s'
                    'out=""; client=""\n'
                    'for a; do case "$a" in -DoutputDirectory=*) out="${a#-DoutputDirectory=}";;\n'
                    '  */hadoop-client/pom.xml) client=1;; esac; done\n'
                    'mkdir -p "$out"\n'
                    'if [ -n "$client" ]; then for j in "%s"/*.jar; do ln -s "$j" "$out/"; done\n'
                    'else cp "%s" "$out/hadoop-streaming-3.4.2.jar"; fi\n'
                    % (warning, client_jars, streaming_jar))
    path.chmod(0o755)
    return path


def fetch_env(tmp_path, mvn):
    return dict(os.environ, MVN=str(mvn), MRSPARSE_ENGINES_CACHE=str(tmp_path / "cache"),
                MRSPARSE_NO_CLUSTER="1", HADOOP_STREAMING_VERSION="3.4.2")


def test_maven_output_reaches_the_log_as_plain_text(streaming_jar, tmp_path):
    # Maven 3.8 writes ANSI codes (ESC[0m) even in batch mode; a stand-in mvn
    # that does the same
    mvn = fake_mvn(tmp_path / "mvn", streaming_jar, warning='printf "\\033[0m\\033[0m'
                   '[WARNING] \\033[1;33mslow mirror\\033[0m\\n"\n')
    out = subprocess.run(["bash", FETCH], env=fetch_env(tmp_path, mvn), capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "[WARNING] slow mirror" in out.stderr
    assert "\x1b" not in out.stderr
    assert out.stdout.strip().endswith("hadoop-streaming.jar")
    # local mode's classpath: the client jars, fetched once (their pom's checksum stamped)
    client = tmp_path / "cache" / "client"
    assert sorted(os.listdir(client / "lib")) == sorted(os.listdir(CLIENT_LIB))
    assert (client / "lib.stamp").read_text().strip()
    again = subprocess.run(["bash", FETCH], env=fetch_env(tmp_path, mvn), capture_output=True,
                           text=True)
    assert again.returncode == 0 and again.stderr == "", again.stderr


def test_client_jars_checked_and_named_when_missing(streaming_jar, tmp_path):
    # a "download" without Hadoop's client classes is not kept ...
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    for name in ("hadoop-client-api-3.5.0.jar", "hadoop-client-runtime-3.5.0.jar"):
        os.symlink(streaming_jar, wrong / name)
    mvn = fake_mvn(tmp_path / "mvn", streaming_jar, client_jars=wrong)
    out = subprocess.run(["bash", FETCH], env=fetch_env(tmp_path, mvn), capture_output=True,
                         text=True)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1] == "fetch-jars.sh: the Hadoop client jars look wrong"
    assert not (tmp_path / "cache" / "client" / "lib").exists()
    # ... and the launcher, finding none, says what fetches them
    env = {k: v for k, v in os.environ.items()
           if k not in ("HADOOP_CONF_DIR", "MRSPARSE_HADOOP_JARS")}
    env["MRSPARSE_ENGINES_CACHE"] = str(tmp_path / "cache")
    run = subprocess.run([LAUNCHER, "fs", "-ls", "/"], capture_output=True, text=True, env=env)
    assert run.returncode == 1
    assert run.stderr == ("hadoop (mrsparse launcher): no Hadoop client jars in %s "
                          "(run: make hadoop)\n" % (tmp_path / "cache" / "client" / "lib"))
