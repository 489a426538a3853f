#!/usr/bin/env bash
# train_hub_models.sh: rebuilds the models of lessons/gpt2.md and lessons/llama.md, in C: small
# models of GPT-2's and Llama's own layouts, saved as folders in the hub's layout (config.json,
# model.safetensors, tokenizer.json) that `--model DIR` opens as it opens a download. Both learn
# the licence texts every Debian machine has (/usr/share/common-licenses, from base-files; each
# file once, in name order), line by line, read as their tokenizer's tokens:
#   assets/models/gpt2-licences   GPT-2's own tokenizer (50,257 tokens), weights stored as F16
#   assets/models/llama-licences  the byte-fallback SentencePiece BPE of assets/tokenizers/
#                                 licences-bpe (1,000 pieces) in Llama's form, weights as BF16
# A fixed number of steps from a fixed seed: the run is reproducible. About 15 minutes on 2 cores.
# Usage: scripts/train_hub_models.sh [path/to/stepformer]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/stepformer}
text=$(mktemp)
trap 'rm -f "$text"' EXIT
find /usr/share/common-licenses -type f | LC_ALL=C sort | xargs cat >"$text"
"$bin" train --task text --data "$text" --tokenizer assets/tokenizers/gpt2/tokenizer.json --program lessons/gpt2.md \
  --config "n_layer=2 n_head=4 n_embd=64 n_positions=64 bos_id=50256 eos_id=50256" --block 64 --batch 16 \
  --steps 1200 --eval-every 300 --seed 1 --dtype f16 --out assets/models/gpt2-licences
"$bin" train --task text --data "$text" --tokenizer assets/tokenizers/licences-bpe/tokenizer.json \
  --program lessons/llama.md --config "num_hidden_layers=2 num_attention_heads=4 num_key_value_heads=2 hidden_size=64 \
  intermediate_size=172 max_position_embeddings=64 rope_theta=10000 rms_norm_eps=1e-5 tie_word_embeddings=1 \
  bos_id=1 eos_id=2" --block 64 --batch 16 --steps 1500 --eval-every 300 --seed 1 --dtype bf16 \
  --out assets/models/llama-licences
