#!/usr/bin/env bash
# train_text_model.sh: rebuilds assets/models/words.safetensors, the model of lessons/text-model.md,
# in C: the text task on the word list of Debian's wamerican package (/usr/share/dict/words, one
# word a line; scripts/deps.sh installs it). The model learns to invent English-looking words.
# A fixed number of steps from a fixed seed, so the run is reproducible; under 5 minutes on 2 cores.
# Usage: scripts/train_text_model.sh [path/to/stepformer]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/stepformer}
words=/usr/share/dict/words
if [ ! -r "$words" ]; then
  echo "train_text_model.sh: $words is missing: install Debian's wamerican package (scripts/deps.sh)" >&2
  exit 1
fi
# --shuffle: the list is sorted, and each word would otherwise follow one that spells most of it.
"$bin" train --task text --data "$words" --shuffle --seed 1 --steps 2500 --eval-every 500 \
  --out assets/models/words.safetensors
