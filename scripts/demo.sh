#!/usr/bin/env bash
# The main job on the embedded default: set up, build, build the demo corpus
# (C4 format, from Debian's fortunes and dict-gcide) and pretrain T5.1.1 tiny
# with span corruption. MODEL_DIR defaults to /tmp/t5xx_demo (replaced).
set -euo pipefail
cd "$(dirname "$0")/.."
model_dir="${MODEL_DIR:-/tmp/t5xx_demo}"
scripts/setup.sh
T5XX_BUILD_TARGETS=t5xx scripts/build.sh  # the demo needs only the binary
build/bin/t5xx build_corpus
rm -rf "$model_dir"
build/bin/t5xx train --gin_file=examples/t5_1_1_tiny_demo.gin --gin.MODEL_DIR="$model_dir"
