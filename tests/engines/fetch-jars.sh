#!/usr/bin/env bash
# Fetch the jars tests/engines/hadoop needs beyond pyspark's own, from Maven
# Central, into the engines cache. Idempotent: does nothing if they are there.
#
# Only hadoop-streaming is fetched, alone (its Hadoop dependencies are
# `provided`): the Hadoop client classes come from pyspark's jars/ dir
# (pyspark 4.3.0 bundles hadoop-client-api/-runtime 3.5.0), so
# `pip install pyspark` is the other half of the install.
#
# hadoop-streaming 3.5.0 is not served by the Maven Central reachable here
# (only 3.4.2 was, of 3.3.6/3.4.0-3.4.3/3.5.0); the 3.4.2 streaming jar runs
# fine on the 3.5.0 client jars.
#
# Environment: MRSPARSE_ENGINES_CACHE (default <repo>/.cache/engines),
#              HADOOP_STREAMING_VERSION (default 3.4.2), MVN (default mvn; may hold options,
#              e.g. MVN='mvn -Dmaven.repo.local=/some/dir').
set -euo pipefail

here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${MRSPARSE_ENGINES_CACHE:-$repo/.cache/engines}"
version="${HADOOP_STREAMING_VERSION:-3.4.2}"
mvn="${MVN:-mvn}"

jar="$cache/hadoop-streaming-$version.jar"
link="$cache/hadoop-streaming.jar"   # stable name for --hadoop-streaming-jar

mkdir -p "$cache"
if [ ! -s "$jar" ]; then
    echo "fetching org.apache.hadoop:hadoop-streaming:$version into $cache" >&2
    tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    # shellcheck disable=SC2086  # MVN may carry options
    $mvn -B -q dependency:copy \
        "-Dartifact=org.apache.hadoop:hadoop-streaming:$version:jar" \
        "-DoutputDirectory=$tmp" >&2
    # check it is a real jar with the streaming main class before keeping it
    unzip -l "$tmp/hadoop-streaming-$version.jar" \
        | grep -q 'org/apache/hadoop/streaming/HadoopStreaming.class' \
        || { echo "fetch-jars.sh: downloaded jar looks wrong" >&2; exit 1; }
    mv "$tmp/hadoop-streaming-$version.jar" "$jar"
fi
ln -sfn "$(basename "$jar")" "$link"
echo "$link"
