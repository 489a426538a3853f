#!/usr/bin/python3
"""spm_to_unigram_json.py MODEL.spm OUT.json: a SentencePiece Unigram model written as a Hugging
Face tokenizer.json of model type Unigram, in the form converted copies of T5's and Marian's
tokenizers take: the pieces and scores in the model's id order, its precompiled character map as
a Precompiled normalizer, then the right end stripped and runs of spaces made one "▁", a
Metaspace pre-tokenizer and decoder (prepend always, split), and "</s>" after the text.

The protobuf is read here field by field (sentencepiece_model.proto: ModelProto 1 pieces, 3
normalizer_spec; SentencePiece 1 piece, 2 score, 3 type; NormalizerSpec 2 precompiled_charsmap).
"""
import base64
import json
import struct
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise SystemExit("not a protobuf")
        yield num, wire, v


def main():
    data = open(sys.argv[1], "rb").read()
    pieces, charsmap = [], b""
    for num, wire, v in fields(data):
        if num == 1 and wire == 2:
            p = {"score": 0.0, "type": 1}
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    p["piece"] = v2.decode("utf-8")
                elif n2 == 2:
                    p["score"] = struct.unpack("<f", v2)[0]
                elif n2 == 3:
                    p["type"] = v2
            pieces.append(p)
        elif num == 3 and wire == 2:
            for n2, w2, v2 in fields(v):
                if n2 == 2:
                    charsmap = v2
    unk = next(i for i, p in enumerate(pieces) if p["type"] == 2)
    eos = next(i for i, p in enumerate(pieces) if p["piece"] == "</s>")
    specials = [i for i, p in enumerate(pieces) if p["type"] in (2, 3)]
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    normalizers = [{"type": "Strip", "strip_left": False, "strip_right": True},
                   {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]
    if charsmap:
        normalizers.insert(0, {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    out = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": pieces[i]["piece"], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for i in specials],
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": meta,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [eos], "tokens": ["</s>"]}}},
        "decoder": meta,
        "model": {"type": "Unigram", "unk_id": unk, "vocab": [[p["piece"], p["score"]] for p in pieces],
                  "byte_fallback": False},
    }
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
