#!/usr/bin/env bash
# train_models.sh: rebuilds the bundled models in assets/models/ from scratch, in C, with the
# commands (and seeds) they were made with. Each stops once held-out exact match reaches its
# goal, checked every few hundred steps, so a run is reproducible. About 8 minutes in all on
# a 2-core machine. Usage: scripts/train_models.sh [path/to/stepformer]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/stepformer}
train() { "$bin" train --task "$1" --seed 1 --eval-every "$2" --steps "$3" --stop-at "$4" --out "assets/models/$1.safetensors"; }
train dates 500 8000 0.995
train copy 500 8000 0.995
train reverse 500 8000 0.995
train sort 1000 20000 0.999
train_prenorm() { "$bin" train --task dates --norm-first --seed 1 --eval-every 500 --steps 8000 --stop-at 0.995 --out assets/models/dates-prenorm.safetensors; }
train_prenorm
# The positional-encoding lesson's model: reverse, trained with that lesson's program, which
# adds no positional encoding anywhere (held-out exact match 3.6%; it is meant to fail).
"$bin" train --program lessons/positional-encoding.md --task reverse --seed 1 --eval-every 1000 --steps 8000 \
  --out assets/models/reverse-no-pe.safetensors
# The mistake lessons' models (lessons/mistake-*.md).
scripts/train_mistake_models.sh "$bin"
# The text lesson's model (lessons/text-model.md): the word list of Debian's wamerican.
scripts/train_text_model.sh "$bin"
# The models of lessons/gpt2.md and lessons/llama.md: folders in the hub's layout.
scripts/train_hub_models.sh "$bin"
# The model of lessons/marian.md: Marian's layout, on the gettext catalogues' English and German.
scripts/train_marian_model.sh "$bin"
# The decoder-only dates model (lessons/causal-self-attention.md, gpt-block.md): the dates task
# written as text lines SOURCE=TARGET, learned as a language model of those lines.
dates_text=$(mktemp)
"$bin" examples --task dates --count 60000 --seed 11 >"$dates_text"
"$bin" train --task text --data "$dates_text" --seed 1 --steps 4000 --eval-every 1000 --block 48 \
  --out assets/models/dates-gpt.safetensors
rm -f "$dates_text"
