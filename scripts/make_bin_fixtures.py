#!/usr/bin/python3
"""Generate PyTorch checkpoints (torch.save's zip + pickle) for tests/test_torch_bin.c.

Writes tests/fixtures/torch_bin/:

  views.bin            a state_dict of views: a [3, 4] tensor, a row of it (a view at an offset of
                       the same storage), its transpose (not contiguous), a strided slice, F16 and
                       BF16 tensors, an int64 buffer, a 0-dimensional one, and an nn.Parameter
  views.safetensors    the same tensors, each made contiguous and float32: what the reader must give
  evil-*.bin           archives whose data.pkl asks for os.system, builtins.eval or
                       subprocess.Popen (GLOBAL + REDUCE), or loops a list into itself; and
                       archives cut short, with a storage shorter than its tensor, or a stride that
                       runs past its storage

And tests/fixtures/hub/marian-bin/: the Marian fixture's config.json with its weights as
pytorch_model.bin (torch.save of the same state_dict), for the fallback --model DIR takes.

  /usr/bin/python3 scripts/make_bin_fixtures.py      (after scripts/make_hub_fixtures.py)

Needs Debian's python3-torch. Nothing here is loaded with torch.load.
"""

import io
import os
import pickle
import shutil
import struct
import sys
import zipfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "torch_bin")


def write_safetensors(path, tensors):
    import json
    head, blobs, pos = {}, [], 0
    for key in tensors:
        raw = tensors[key].detach().to(torch.float32).contiguous().numpy().tobytes()
        head[key] = {"dtype": "F32", "shape": list(tensors[key].shape), "data_offsets": [pos, pos + len(raw)]}
        blobs.append(raw)
        pos += len(raw)
    text = json.dumps(head).encode()
    text += b" " * ((8 - (len(text) + 8) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def views():
    g = torch.Generator().manual_seed(3)
    t = torch.randn(3, 4, generator=g)
    wide = torch.randn(2, 6, generator=g)
    sd = {
        "t": t,
        "row": t[1],                          # offset 4 into t's storage
        "t_T": t.t(),                         # strides (1, 4)
        "every_other": wide[:, ::2],          # strides (6, 2)
        "half": torch.randn(5, generator=g).half(),
        "bf16": torch.randn(2, 3, generator=g).bfloat16(),
        "ids": torch.arange(6, dtype=torch.int64).view(2, 3),
        "scalar": torch.tensor(2.5),
        "param": torch.nn.Parameter(torch.randn(4, generator=g)),
    }
    torch.save(sd, os.path.join(OUT, "views.bin"))
    expected = {k: (v.detach().float() if k != "scalar" else v.detach().float().reshape(1)) for k, v in sd.items()}
    write_safetensors(os.path.join(OUT, "views.safetensors"), expected)


def archive(name, pkl, storages=None, cut=None):
    """A zip laid out as torch.save lays it out, holding the given data.pkl and storages."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        for key, raw in (storages or {}).items():
            z.writestr("archive/data/" + key, raw)
        z.writestr("archive/version", "3\n")
    data = buf.getvalue()
    if cut:
        data = data[:cut]
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


class Reduce:
    """Pickles as GLOBAL module.name, REDUCE with args: what an attack asks the unpickler to run."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def evil():
    import builtins
    import subprocess
    archive("evil-os-system.bin", pickle.dumps({"x": Reduce(os.system, ("touch /tmp/stepformer-pwned",))}, protocol=2))
    archive("evil-eval.bin", pickle.dumps({"x": Reduce(builtins.eval, ("1+1",))}, protocol=2))
    archive("evil-popen.bin", pickle.dumps({"x": Reduce(subprocess.Popen, (["true"],))}, protocol=2))
    loop = []
    loop.append(loop)
    archive("evil-loop.bin", pickle.dumps({"x": loop}, protocol=2))
    # A real checkpoint, then damaged: cut short, a storage shorter than its tensor, a stride past it.
    buf = io.BytesIO()
    torch.save({"w": torch.arange(12, dtype=torch.float32).view(3, 4)}, buf)
    good = buf.getvalue()
    with open(os.path.join(OUT, "evil-truncated.bin"), "wb") as f:
        f.write(good[: len(good) // 2])
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        names = z.namelist()
        pkl = z.read([n for n in names if n.endswith("data.pkl")][0])
        raw = z.read([n for n in names if n.endswith("data/0")][0])
    archive("evil-short-storage.bin", pkl, {"0": raw[:20]})
    # The same tensor [3, 4] with strides (4, 1) rewritten as (5, 1): its last element is past 12.
    strided = pkl.replace(b"K\x04K\x01\x86", b"K\x05K\x01\x86")
    assert strided != pkl, "the stride tuple was not found in data.pkl"
    archive("evil-stride.bin", strided, {"0": raw})


def marian_bin():
    src = os.path.join(ROOT, "tests", "fixtures", "hub", "marian")
    dst = os.path.join(ROOT, "tests", "fixtures", "hub", "marian-bin")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    shutil.copy(os.path.join(src, "config.json"), dst)
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from make_hub_fixtures import read_safetensors
    sd = read_safetensors(os.path.join(src, "model.safetensors"))
    # As transformers saves it: the shared embedding one storage under its three names.
    shared = sd["model.shared.weight"]
    for k in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"):
        sd[k] = shared
    torch.save(sd, os.path.join(dst, "pytorch_model.bin"))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    views()
    evil()
    marian_bin()
    print("wrote", OUT, "and tests/fixtures/hub/marian-bin")


if __name__ == "__main__":
    sys.exit(main())
