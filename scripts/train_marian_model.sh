#!/usr/bin/env bash
# train_marian_model.sh [path/to/stepformer]: the translation model lessons/marian.md runs,
# assets/models/marian-gettext-en-de, made on this machine from what Debian installs:
#
#   1. the English-German pairs of the German gettext catalogues in
#      /usr/share/locale/de/LC_MESSAGES (scripts/make_gettext_pairs.py; which catalogues, and how
#      many pairs each gave, is written to the folder's catalogues.txt);
#   2. two SentencePiece Unigram models (Debian's spm_train, default nmt_nfkc rules, 2000 pieces
#      each) on the English and on the German side: source.spm and target.spm, and vocab.json
#      numbering </s> 0, <unk> 1, the source's pieces, the target's, <pad> last, one vocabulary for
#      both sides as opus-mt's is;
#   3. the Marian program (lessons/marian.md) trained in C on the pairs (train --task translate),
#      every 10th pair held out, and saved as a hub folder, F16. The held-out pairs are written to
#      the folder's heldout.tsv, on which tests/test_marian_lesson.c measures the lesson's numbers.
# Needs python3, sentencepiece and the catalogues the machine has (88 here: the list says which).
# 6000 steps from seed 1: about 20 minutes on 2 cores. The held-out exact match it prints is of the
# weights before F16; tests/test_marian_lesson.c measures the stored ones (258 of 2118).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/stepformer}
out=$root/assets/models/marian-gettext-en-de
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/scripts/make_gettext_pairs.py" "$work/pairs.tsv" "$work/catalogues.txt"
cut -f1 "$work/pairs.tsv" >"$work/en.txt"
cut -f2 "$work/pairs.tsv" >"$work/de.txt"
mkdir -p "$work/tok"
for side in en de; do
  spm_train --input="$work/$side.txt" --model_prefix="$work/$side" --vocab_size=2000 --model_type=unigram \
    --num_threads=1 --random_seed=1 --unk_id=1 --eos_id=0 --bos_id=-1 --pad_id=-1 >/dev/null 2>&1
done
cp "$work/en.model" "$work/tok/source.spm"
cp "$work/de.model" "$work/tok/target.spm"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
vocab = {"</s>": 0, "<unk>": 1}
for side in ("en", "de"):
    for line in open("%s/%s.vocab" % (work, side), encoding="utf-8"):
        piece = line.split("\t")[0]
        if piece not in ("<unk>", "<s>", "</s>"):
            vocab.setdefault(piece, len(vocab))
vocab["<pad>"] = len(vocab)
json.dump(vocab, open("%s/tok/vocab.json" % work, "w", encoding="utf-8"), ensure_ascii=False, indent=1)
PY
rm -rf "$out"
"$bin" train --task translate --data "$work/pairs.tsv" --tokenizer "$work/tok" \
  --program "$root/lessons/marian.md" --dtype f16 --steps 6000 --eval-every 2000 --seed 1 \
  --config "d_model=128 encoder_layers=2 decoder_layers=2 encoder_attention_heads=4 encoder_ffn_dim=256" --out "$out"
cp "$work/catalogues.txt" "$out/catalogues.txt"
awk 'NR % 10 == 0' "$work/pairs.tsv" >"$out/heldout.tsv"  # the pairs training held out (pairs.h)
