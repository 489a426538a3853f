#!/usr/bin/python3
"""A SentencePiece BPE model (spm_train --model_type=bpe --byte_fallback=true) written as a
tokenizer.json in the form Hugging Face's files of Llama 2 and TinyLlama have: the normalizer
Prepend("▁") then Replace(" " -> "▁"), no pre-tokenizer, BPE with byte_fallback and the merges
the pieces' scores imply (as transformers' LlamaConverter derives them), the decoder Replace,
ByteFallback, Fuse, Strip, and a BOS added by TemplateProcessing.

  spm_export_vocab --model=M.model --output=M.vocab
  /usr/bin/python3 scripts/tokenizers/spm_to_tokenizer_json.py M.vocab tokenizer.json
"""
import json
import sys

SP = "\u2581"


def main(vocab_file, out):
    pieces = []
    for line in open(vocab_file, encoding="utf-8"):
        piece, score = line.rstrip("\n").split("\t")
        pieces.append((piece, float(score)))
    vocab = {p: i for i, (p, _) in enumerate(pieces)}
    # Merges: every split of a piece into two pieces of the vocabulary, the merged piece's score
    # deciding the order (highest first), then the two halves' ids.
    merges = []
    for piece, score in pieces:
        local = []
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: m[2], reverse=True)
    specials = [(0, "<unk>"), (1, "<s>"), (2, "</s>")]
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, c in specials],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SP},
            {"type": "Replace", "pattern": {"String": " "}, "content": SP}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SP}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[l, r] for l, r, _ in merges]},
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)


if __name__ == "__main__":
    main(*sys.argv[1:3])
