#!/usr/bin/env bash
# Fetch the jars of the real-engine tests from Maven Central into the engines
# cache, and compile the test cluster's wrapper. Idempotent: does nothing for
# what is already there and up to date. Prints the streaming jar's path last.
#
# 1. hadoop-streaming, alone (its Hadoop dependencies are `provided`).
#    hadoop-streaming 3.5.0 is not served by the Maven Central reachable here
#    (only 3.4.2 was, of 3.3.6/3.4.0-3.4.3/3.5.0); the 3.4.2 streaming jar runs
#    fine on the 3.5.0 client jars and on the 3.5.0 cluster.
# 2. Hadoop's local mode (tests/engines/hadoop without a cluster): the shaded
#    Hadoop 3.5.0 client (hadoop-client-api, hadoop-client-runtime) and the few
#    jars it needs beside it, listed in tests/engines/hadoop-client/pom.xml
#    (11 jars, 54 MB), into $cache/client/lib; redone when the pom changes
#    (lib.stamp: its checksum). With 1, all that `-r hadoop` in local mode
#    needs besides Java and mrsparse (`make hadoop`).
# 3. The test cluster (tests/engines/cluster.py: HDFS + YARN in one JVM): the
#    unshaded hadoop-minicluster and its dependencies, listed in
#    tests/engines/minicluster/pom.xml (~200 jars, ~115 MB), into
#    $cache/cluster/lib, and MiniCluster.java compiled into $cache/cluster/classes.
#    Each is redone when its source changes (lib.stamp, classes.stamp: checksums).
#
# Environment: MRSPARSE_ENGINES_CACHE (default <repo>/.cache/engines),
#              HADOOP_STREAMING_VERSION (default 3.4.2), MVN (default mvn; may hold options,
#              e.g. MVN='mvn -Dmaven.repo.local=/some/dir'), JAVAC (default javac),
#              MRSPARSE_NO_CLUSTER=1 skips step 3.
set -euo pipefail

here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${MRSPARSE_ENGINES_CACHE:-$repo/.cache/engines}"
version="${HADOOP_STREAMING_VERSION:-3.4.2}"
mvn="${MVN:-mvn}"
javac="${JAVAC:-javac}"

# run_mvn ARGS...: Maven in batch mode, its output on stderr as plain text:
# Maven 3.8 writes ANSI resets (ESC[0m) even with -B and -Dstyle.color=never
run_mvn() {
    # shellcheck disable=SC2086  # MVN may carry options
    $mvn -B -Dstyle.color=never "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
}

# jar_has JAR ENTRY: is ENTRY in JAR? The listing goes to a file first: with
# `unzip -l | grep -q` under pipefail, grep exits at the first match, unzip
# gets SIGPIPE, and the check fails at random.
jar_has() {
    local listing rc=0
    listing="$(mktemp "${TMPDIR:-/tmp}/mrsparse-jar-list.XXXXXX")"
    unzip -l "$1" > "$listing" 2>/dev/null || rc=$?
    if [ "$rc" -eq 0 ] && grep -qF "$2" "$listing"; then rc=0; else rc=1; fi
    rm -f "$listing"
    return "$rc"
}

# stale STAMPFILE VALUE: is what STAMPFILE records missing or other than VALUE?
stale() {
    [ ! -f "$1" ] || [ "$(cat "$1")" != "$2" ]
}

# keep_lib FETCHED DIR STAMP: DIR/lib replaced by FETCHED, DIR/lib.stamp set to STAMP
keep_lib() {
    rm -rf "$2/lib"
    mv "$1" "$2/lib"
    echo "$3" > "$2/lib.stamp"
}

if [ "${1:-}" = "--check-jar" ]; then    # for the tests: fetch-jars.sh --check-jar JAR ENTRY
    jar_has "$2" "$3"
    exit
fi

jar="$cache/hadoop-streaming-$version.jar"
link="$cache/hadoop-streaming.jar"   # stable name for --hadoop-streaming-jar
tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT

mkdir -p "$cache"
if [ ! -s "$jar" ]; then
    echo "fetching org.apache.hadoop:hadoop-streaming:$version into $cache" >&2
    tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
    run_mvn -q dependency:copy \
        "-Dartifact=org.apache.hadoop:hadoop-streaming:$version:jar" \
        "-DoutputDirectory=$tmp"
    # check it is a real jar with the streaming main class before keeping it
    jar_has "$tmp/hadoop-streaming-$version.jar" 'org/apache/hadoop/streaming/HadoopStreaming.class' \
        || { echo "fetch-jars.sh: downloaded jar looks wrong" >&2; exit 1; }
    mv "$tmp/hadoop-streaming-$version.jar" "$jar"
    rm -rf "$tmp"; tmp=""
fi
ln -sfn "$(basename "$jar")" "$link"

client="$cache/client"
client_src="$here/hadoop-client/pom.xml"
client_stamp="$(cksum < "$client_src")"
if stale "$client/lib.stamp" "$client_stamp"; then
    echo "fetching Hadoop's client jars (local mode, 54 MB) into $client" >&2
    mkdir -p "$client"
    tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
    # exactly the pom's jars: the shaded client carries its own dependencies
    run_mvn -q -f "$client_src" dependency:copy-dependencies \
        -DexcludeTransitive=true "-DoutputDirectory=$tmp/lib"
    jars=("$tmp"/lib/hadoop-client-api-*.jar "$tmp"/lib/hadoop-client-runtime-*.jar)
    [ -f "${jars[0]}" ] && [ -f "${jars[1]}" ] \
        && jar_has "${jars[0]}" 'org/apache/hadoop/mapred/LocalJobRunner.class' \
        || { echo "fetch-jars.sh: the Hadoop client jars look wrong" >&2; exit 1; }
    keep_lib "$tmp/lib" "$client" "$client_stamp"
    rm -rf "$tmp"; tmp=""
fi

if [ -z "${MRSPARSE_NO_CLUSTER:-}" ]; then
    src="$here/minicluster"
    cluster="$cache/cluster"
    mkdir -p "$cluster"
    lib_stamp="$(cksum < "$src/pom.xml")"
    if stale "$cluster/lib.stamp" "$lib_stamp"; then
        echo "fetching the test cluster's jars (hadoop-minicluster, ~115 MB) into $cluster" >&2
        rm -f "$cluster/classes.stamp"
        tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
        run_mvn -q -f "$src/pom.xml" dependency:copy-dependencies \
            -DincludeScope=runtime "-DoutputDirectory=$tmp/lib"
        ls "$tmp/lib" > "$tmp/jars.txt"
        grep -q '^hadoop-mapreduce-client-jobclient-.*-tests\.jar$' "$tmp/jars.txt" \
            || { echo "fetch-jars.sh: no hadoop-mapreduce-client-jobclient tests jar" >&2; exit 1; }
        keep_lib "$tmp/lib" "$cluster" "$lib_stamp"
        rm -rf "$tmp"; tmp=""
    fi
    classes_stamp="$(cksum < "$src/MiniCluster.java")"
    if stale "$cluster/classes.stamp" "$classes_stamp"; then
        tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
        # -XDignore.symbol.file: sun.misc.Signal is what stops the cluster cleanly
        "$javac" -XDignore.symbol.file -nowarn -d "$tmp" -cp "$cluster/lib/*" \
            "$src/MiniCluster.java" >&2
        rm -rf "$cluster/classes"
        mv "$tmp" "$cluster/classes"
        tmp=""
        echo "$classes_stamp" > "$cluster/classes.stamp"
    fi
fi
echo "$link"
