#!/usr/bin/env bash
# pictures.sh [BINARY] [OUT_DIR]: makes the README's pictures of the window with `stepformer
# export` (no display needed), at 1280x720: docs/img/attention.png, backward.png and
# positions.png. BINARY defaults to build/stepformer, OUT_DIR to docs/img. tests/test_pictures.c
# runs this script into a scratch folder and compares what it makes with the committed pictures:
# after a change to what the window draws, run it again and commit the pictures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/stepformer}
out=${2:-$root/docs/img}
size=1280x720
[ -x "$bin" ] || { echo "pictures.sh: no program at $bin (build it first, or name it)" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shot NAME PATTERN LESSON EXPORT_ARGS...: exports into a folder of its own and keeps, as
# NAME.png, the one picture whose file name (index-stage_id.png) matches PATTERN.
shot() {
    local name=$1 pattern=$2 lesson=$3
    shift 3
    "$bin" export "$root/lessons/$lesson" --out "$work/$name" --size "$size" "$@" >/dev/null
    local found=("$work/$name"/$pattern)
    [ ${#found[@]} -eq 1 ] && [ -f "${found[0]}" ] ||
        { echo "pictures.sh: export of $lesson wrote no single $pattern" >&2; exit 1; }
    cp "${found[0]}" "$out/$name.png"
    echo "$out/$name.png"
}

# The Attention view: the forward-pass lesson's last round of greedy decoding, the second decoder
# layer's cross-attention after its softmax: each character of the answer reads the date.
shot attention '*-step.*.decoder.layers.1.cross_attn.weights.png' forward-pass.md \
     --view attention --stages decoder.layers.1.cross_attn.weights
# The backward pass: lessons/backprop.md (its lesson block gives the target), the first step
# after the loss: the gradient reaching the generator's logits, and what it sends to the weights.
# --backward writes every step; one forward stage (--stages) keeps the rest short.
shot backward 'b*-backward-generator.logits.png' backprop.md \
     --stages generator.probs --backward
# The Positions view, on the forward-pass lesson's first stage: the model's sinusoidal table.
shot positions '*-encoder.embed.png' forward-pass.md --view positions --stages encoder.embed
