#!/usr/bin/env bash
# Regenerates ../golden from ../files with Kafka's own MirrorMakerConfig. Run from anywhere; needs the
# Kafka 4.1.1 jars (KAFKA_LIBS, else scripts/harness libs) and a JDK.
set -euo pipefail
pkg=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
libs=${KAFKA_LIBS:-$("$pkg/../../scripts/harness" libs)}
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -d "$classes" -cp "$libs/*" "$pkg/testdata/java/MM2ConfigDump.java"
cd "$pkg" # config provider paths in the files are relative to the package
env -u SRC_BOOTSTRAP java -cp "$classes:$libs/*" MM2ConfigDump testdata/golden testdata/files/*.properties 2>/dev/null
