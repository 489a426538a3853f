#!/usr/bin/env bash
# train_mistake_models.sh: rebuilds the models of the mistake lessons (lessons/mistake-*.md) in
# assets/models/ from scratch, in C, with the commands, seeds and steps they were made with. Each
# trains the program of its lesson, so a model always matches the program that runs it. The
# dates mistakes run the bundled dates.safetensors and need nothing here. About 10 minutes in
# all on a 2-core machine. Usage: scripts/train_mistake_models.sh [path/to/stepformer]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/stepformer}
# A decoder trained without the causal mask: teacher-forced accuracy 100%, greedy 0.0%.
"$bin" train --program lessons/mistake-no-causal-mask.md --task reverse --seed 1 --eval-every 500 --steps 2000 \
  --out assets/models/mistake-no-causal-mask.safetensors
# Reverse without any positional encoding (held-out exact match about 5%).
"$bin" train --program lessons/mistake-no-positions.md --task reverse --seed 1 --eval-every 500 --steps 3000 \
  --out assets/models/mistake-no-positions.safetensors
# The classifier with a feed-forward of width 4*4, and the same with the right width (4 * d_model),
# same seed and steps: the held-out accuracies the lesson compares (99.6% and 99.2%).
"$bin" train --program lessons/mistake-narrow-feed-forward.md --task brackets --seed 1 --eval-every 500 --steps 3000 \
  --out assets/models/mistake-ff-16.safetensors
"$bin" train --program lessons/transformers-from-scratch.md --task brackets --seed 1 --eval-every 500 --steps 3000 \
  --out assets/models/mistake-ff-192.safetensors
