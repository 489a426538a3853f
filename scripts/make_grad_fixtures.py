#!/usr/bin/python3
"""Reference gradients for `stepformer trace --labels IDS --grads OUT`.

For each model below, PyTorch autograd computes the loss of one teacher-forced pass against
labels and the gradient of that loss for every parameter of the model, under its state_dict
name. The models are the fixture models the forward tests already use (tests/fixtures and
tests/fixtures/seeds), rebuilt by the scripts that made them, with the saved weights loaded
back; the inputs are those of their case files.

The loss is the contract's: the mean over the labels that are not <pad> of the cross-entropy
of the logits row against its label, no label smoothing (torch.nn.functional.cross_entropy with
ignore_index=pad). For the classifier (bloem) the one label is the class.

The reference is computed in float64 from the float32 weights. The same pass in float32 autograd
is asserted to agree with it to 2e-5 of each tensor's largest |gradient|, so either is PyTorch's
answer within the test's tolerance (1e-4).

Writes tests/fixtures/grads/NAME.caseK.safetensors holding src_ids, tgt_ids (encoder-decoders),
labels, loss [1], and grad.KEY for every parameter (buffers have none). Metadata: the model file
and the program (lesson) it runs under, relative to tests/fixtures.

    /usr/bin/python3 scripts/make_grad_fixtures.py          # write, then check
    /usr/bin/python3 scripts/make_grad_fixtures.py --check  # only re-read and check
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402
import make_seed_fixtures as msf  # noqa: E402

ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(FIXTURES, "grads")
PAD = 1
EOS = 3
AGREE = 2e-5  # float32 autograd against float64, relative to the tensor's largest |gradient|

# name, the script that made it, the model file, the program, the cases (case file, and which
# label positions are made <pad> so that they must not count).
MODELS = [
    dict(name="post_2x2", maker="mf", model="post_2x2.safetensors", program="",
         cases=[("post_2x2.case0.safetensors", []), ("post_2x2.case1.safetensors", [1])]),
    dict(name="pre_1x3_gelu", maker="mf", model="pre_1x3_gelu.safetensors", program="",
         cases=[("pre_1x3_gelu.case0.safetensors", [])]),
    dict(name="annotated", maker="msf", model="seeds/annotated.safetensors",
         program="../../lessons/annotated-transformer.md",
         cases=[("seeds/annotated.case0.safetensors", []), ("seeds/annotated.case1.safetensors", [2])]),
    dict(name="jadore", maker="msf", model="seeds/jadore.safetensors",
         program="../../lessons/attention-is-all-you-need-pytorch.md",
         cases=[("seeds/jadore.case0.safetensors", []), ("seeds/jadore.case1.safetensors", [0])]),
    dict(name="bloem", maker="msf", model="seeds/bloem.safetensors",
         program="../../lessons/transformers-from-scratch.md",
         cases=[("seeds/bloem.case0.safetensors", []), ("seeds/bloem.case1.safetensors", [])]),
]


def config_of(spec):
    configs = mf.CONFIGS if spec["maker"] == "mf" else msf.CONFIGS
    return next(c for c in configs if c["name"] == spec["name"])


def load_model(spec, dtype):
    cfg = config_of(spec)
    model = mf.build_model(cfg) if spec["maker"] == "mf" else msf.build_model(cfg)
    _, _, state = msf.read_safetensors(os.path.join(FIXTURES, spec["model"]))
    model.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in state.items()})
    model.eval()
    return model.to(dtype), cfg


def logits_of(spec, model, src, tgt):
    """The published logits of one pass: [T, V], or [C] for the classifier."""
    if spec["maker"] == "mf":
        return model.forward(src, tgt)
    s = src.unsqueeze(0)
    if spec["name"] == "bloem":
        return model.class_scores(s)[0]
    t = tgt.unsqueeze(0)
    if spec["name"] == "annotated":
        src_mask, tgt_mask = msf.ann_masks(s, t)
        hidden = model.decode(model.encode(s, src_mask), src_mask, t, tgt_mask)
        return model.generator.proj(hidden)[0]
    return model(s, t)  # jadore: [T, V]


def labels_for(spec, case, padded):
    if spec["name"] == "bloem":  # a class for the example, drawn from its ids
        return torch.tensor([int(case["src_ids"].sum()) % config_of(spec)["num_classes"]])
    tgt = [int(v) for v in case["tgt_ids"]]
    labels = tgt[1:] + [EOS]
    for k in padded:
        labels[k] = PAD
    return torch.tensor(labels)


def gradients(spec, case, labels, dtype):
    model, _ = load_model(spec, dtype)
    src = torch.tensor(case["src_ids"]).long()
    tgt = torch.tensor(case["tgt_ids"]).long() if "tgt_ids" in case else None
    logits = logits_of(spec, model, src, tgt)
    if logits.dim() == 1:
        logits = logits.unsqueeze(0)
    loss = F.cross_entropy(logits, labels, ignore_index=PAD if spec["name"] != "bloem" else -100)
    loss.backward()
    grads = {}
    for key, value in model.state_dict(keep_vars=True).items():
        if isinstance(value, torch.nn.Parameter):  # a buffer has no gradient
            g = value.grad if value.grad is not None else torch.zeros_like(value)
            grads[key] = g.detach().to(torch.float64).clone()
    return float(loss), grads


def make(spec, k, case_file, padded):
    _, _, case = msf.read_safetensors(os.path.join(FIXTURES, case_file))
    labels = labels_for(spec, case, padded)
    loss64, g64 = gradients(spec, case, labels, torch.float64)
    loss32, g32 = gradients(spec, case, labels, torch.float32)
    assert abs(loss64 - loss32) <= 1e-5 * max(1.0, abs(loss64)), (spec["name"], loss64, loss32)
    for key, ref in g64.items():
        scale = max(float(ref.abs().max()), 1e-30)
        assert float((g32[key] - ref).abs().max()) <= AGREE * max(scale, 1.0), (spec["name"], key)
    tensors = {"src_ids": torch.tensor(case["src_ids"], dtype=torch.float32),
               "labels": labels.float(), "loss": torch.tensor([loss64], dtype=torch.float32)}
    if "tgt_ids" in case:
        tensors["tgt_ids"] = torch.tensor(case["tgt_ids"], dtype=torch.float32)
    for key, ref in g64.items():
        tensors["grad." + key] = ref.float()
    meta = {"model": spec["model"], "program": spec["program"], "case": case_file}
    path = os.path.join(OUT, "%s.case%d.safetensors" % (spec["name"], k))
    msf.write_safetensors(path, tensors, meta)
    return path, loss64, len(g64)


def check(path):
    size, meta, t = msf.read_safetensors(path)
    assert meta and {"model", "program", "case"} <= set(meta), path
    assert t["loss"].shape == (1,) and t["loss"][0] > 0, path
    assert any(k.startswith("grad.") for k in t), path
    return size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only re-read and check the files")
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    paths = []
    for spec in MODELS:
        for k, (case_file, padded) in enumerate(spec["cases"]):
            path = os.path.join(OUT, "%s.case%d.safetensors" % (spec["name"], k))
            if not args.check:
                path, loss, n = make(spec, k, case_file, padded)
                print("%-36s loss %.6f, %d gradients" % (os.path.relpath(path, ROOT), loss, n))
            paths.append(path)
    total = sum(check(p) for p in paths)
    print("checked %d files, %d bytes" % (len(paths), total))


if __name__ == "__main__":
    main()
