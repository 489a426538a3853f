#!/usr/bin/env bash
# test_torch2st.sh: tests scripts/torch2st.py (PyTorch checkpoint -> .safetensors).
#
# In a temporary directory it builds small checkpoints in PyTorch for six layouts (a plain
# state_dict with a 'module.' prefix, one wrapped in {"state_dict": ...} with a tied tensor,
# whole pickled nn.Modules, ...), converts each, and re-reads every output with a reader of
# its own that parses the header by hand: names, shapes, bit-exact values, metadata, packing.
# It also checks the best-match lines and the error cases. Prints "N passed, M failed" and
# exits non-zero on any failure; without python3-torch it prints a skip line and exits 0.
# KEEP_TMP=1 keeps the temporary directory for a look.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
PY=/usr/bin/python3
CONV="$ROOT/scripts/torch2st.py"
RUN="run: build/stepformer run --program"  # how the best-match line begins its hint

if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
    echo "SKIP: test_torch2st.sh needs python3-torch and python3-numpy"
    exit 0
fi

T=$(mktemp -d)
if [ -n "${KEEP_TMP:-}" ]; then echo "keeping $T"; else trap 'rm -rf "$T"' EXIT; fi
cd "$T" || exit 1
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

# ---------------------------------------------------------------------------------------------
# The checkpoints. Each NAME.pt comes with NAME.ref.pt: {name: the float32 tensor expected}.
cat > make.py <<'EOF'
import collections
import json

import torch
import torch.nn as nn

torch.manual_seed(1234)
R = collections.OrderedDict


def ref_of(sd, strip=""):
    """The expected output: every float tensor as float32, under its name without `strip`."""
    return {k[len(strip):]: v.detach().to(torch.float32).contiguous().clone()
            for k, v in sd.items() if isinstance(v, torch.Tensor) and v.is_floating_point()}


def save(name, obj, ref):
    torch.save(obj, f"{name}.pt")
    torch.save(ref, f"{name}.ref.pt")


def module(**children):
    """A plain nn.Module holding children (picklable: no class of ours is involved)."""
    m = nn.Module()
    for k, v in children.items():
        m.add_module(k, v)
    return m


def seq2seq(norm_first):
    """The nn.Transformer tutorial's Seq2SeqTransformer: d_model 16, 2+1 layers, d_ff 24."""
    root = module(
        transformer=nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2,
                                   num_decoder_layers=1, dim_feedforward=24,
                                   norm_first=norm_first),
        generator=nn.Linear(16, 11),
        src_tok_emb=module(embedding=nn.Embedding(9, 16)),
        tgt_tok_emb=module(embedding=nn.Embedding(11, 16)),
        positional_encoding=nn.Module())
    root.positional_encoding.register_buffer("pos_embedding", torch.randn(40, 1, 16))
    return root


# 1. nn.Transformer layout: a plain state_dict with a 'module.' prefix (DataParallel), an
#    integer buffer, a non-tensor entry, a float16 and a float64 tensor, a non-contiguous one,
#    and values whose bits must survive (NaN with a payload, -0.0, inf, a denormal).
sd = R(("module." + k, v) for k, v in seq2seq(False).state_dict().items())
sd["module.generator.bias"] = torch.randn(11).half()
sd["module.transformer.encoder.norm.bias"] = torch.randn(16, dtype=torch.float64)
sd["module.transformer.encoder.layers.1.linear1.weight"] = torch.randn(16, 24).t()
special = torch.tensor([float("nan"), -0.0, float("inf"), float("-inf"), 1e-40, 3.0])
nan_payload = torch.tensor([0x7FC01234], dtype=torch.int32).view(torch.float32)
sd["module.src_tok_emb.embedding.weight"][0, :6] = special
sd["module.src_tok_emb.embedding.weight"][0, 6] = nan_payload[0]
sd["module.num_batches_tracked"] = torch.tensor(12)
sd["module.step"] = 7
save("nnt", sd, ref_of(sd, "module."))
with open("nnt.meta.json", "w") as f:  # the metadata expected with the test's flags
    json.dump({"nhead": "2", "norm_first": "false", "num_encoder_layers": "2",
               "num_decoder_layers": "1", "d_model": "16", "src_vocab_size": "9",
               "tgt_vocab_size": "11", "dim_feedforward": "24", "max_positions": "40",
               "src_tokens": json.dumps(["<unk>", "<pad>", "<bos>", "<eos>", "a", "b", "c", "d",
                                         "\u00e9"], ensure_ascii=False),
               "tgt_tokens": json.dumps(["<unk>", "x", "y", "z", "w", "v", "u", "t", "s", "r",
                                         "q"])}, f)

# 2. The same layout, pre-norm, as a whole pickled nn.Module.
whole = seq2seq(True)
save("prenorm", whole, ref_of(whole.state_dict()))

# 3. The Annotated Transformer: {"state_dict": ...} with a config entry (never read) and the
#    target embedding tied to the generator (one tensor under two names). 2+1 layers.
d, ff, vs, vt, pe = 16, 32, 13, 17, 30
sd = R()
sd["src_embed.0.lut.weight"] = torch.randn(vs, d)
sd["src_embed.1.pe"] = torch.randn(1, pe, d)
sd["tgt_embed.0.lut.weight"] = torch.randn(vt, d)
sd["tgt_embed.1.pe"] = sd["src_embed.1.pe"]
for side, n, attns, subs in (("encoder", 2, ("self_attn",), 2),
                             ("decoder", 1, ("self_attn", "src_attn"), 3)):
    for i in range(n):
        p = f"{side}.layers.{i}."
        for a in attns:
            for j in range(4):
                sd[f"{p}{a}.linears.{j}.weight"] = torch.randn(d, d)
                sd[f"{p}{a}.linears.{j}.bias"] = torch.randn(d)
        sd[p + "feed_forward.w_1.weight"] = torch.randn(ff, d)
        sd[p + "feed_forward.w_1.bias"] = torch.randn(ff)
        sd[p + "feed_forward.w_2.weight"] = torch.randn(d, ff)
        sd[p + "feed_forward.w_2.bias"] = torch.randn(d)
        for j in range(subs):
            sd[f"{p}sublayer.{j}.norm.a_2"] = torch.randn(d)
            sd[f"{p}sublayer.{j}.norm.b_2"] = torch.randn(d)
    sd[side + ".norm.a_2"] = torch.randn(d)
    sd[side + ".norm.b_2"] = torch.randn(d)
sd["generator.proj.weight"] = sd["tgt_embed.0.lut.weight"]  # tied
sd["generator.proj.bias"] = torch.randn(vt)
save("annotated", {"state_dict": sd, "epoch": 3, "config": {"h": 4, "dropout": 0.1}},
     ref_of(sd))

# 4. Peter Bloem's classifier as a whole pickled nn.Module (3 blocks, emb 12, ff 48, 5 classes),
#    with one parameter stored transposed (not contiguous).
def tblock():
    b = module(attention=module(to_keys=nn.Linear(12, 12, bias=False),
                                to_queries=nn.Linear(12, 12, bias=False),
                                to_values=nn.Linear(12, 12, bias=False),
                                unify_heads=nn.Linear(12, 12)),
               norm_1=nn.LayerNorm(12), norm_2=nn.LayerNorm(12),
               ff=nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Linear(48, 12)))
    with torch.no_grad():
        b.norm_1.weight.normal_()
    return b
bloem = module(token_embedding=nn.Embedding(50, 12), pos_embedding=nn.Embedding(20, 12),
               tblocks=nn.Sequential(tblock(), tblock(), tblock()), toprobs=nn.Linear(12, 5))
bloem.tblocks[1].attention.to_keys.weight = nn.Parameter(torch.randn(12, 12).t())
assert not bloem.tblocks[1].attention.to_keys.weight.is_contiguous()
save("bloem", bloem, ref_of(bloem.state_dict()))

# 5. The encoder from scratch: {"model_state_dict": ...}, every key under 'model.', an integer
#    buffer, one expected tensor missing and one name of no lesson.
sd = R()
sd["model.embedding.weight"] = torch.randn(21, 8)
for i in range(2):
    p = f"model.layers.{i}."
    sd[p + "attention.qkv_layer.weight"] = torch.randn(24, 8)
    sd[p + "attention.qkv_layer.bias"] = torch.randn(24)
    sd[p + "attention.linear_layer.weight"] = torch.randn(8, 8)
    sd[p + "attention.linear_layer.bias"] = torch.randn(8)
    for n in ("norm1", "norm2"):
        sd[p + n + ".gamma"] = torch.randn(8)
        sd[p + n + ".beta"] = torch.randn(8)
    sd[p + "ffn.linear1.weight"] = torch.randn(20, 8)
    sd[p + "ffn.linear1.bias"] = torch.randn(20)
    sd[p + "ffn.linear2.weight"] = torch.randn(8, 20)
    sd[p + "ffn.linear2.bias"] = torch.randn(8)
del sd["model.layers.1.norm2.beta"]
sd["model.classifier.weight"] = torch.randn(3, 8)
sd["model.bn.num_batches_tracked"] = torch.tensor(5)
save("efs", {"model_state_dict": sd, "args": {"lr": 0.1}}, ref_of(sd, "model."))

# 6. attention-is-all-you-need-pytorch: {"model": ...}, source and target embeddings and the
#    output projection all one tensor, float64 weights, and a 5-dimensional extra tensor.
d, ff, v, npos = 8, 16, 19, 25
emb = torch.randn(v, d, dtype=torch.float64)
sd = R()
for side, n, attns, emb_name in (("encoder", 1, ("slf_attn",), "src_word_emb"),
                                 ("decoder", 2, ("slf_attn", "enc_attn"), "trg_word_emb")):
    sd[f"{side}.{emb_name}.weight"] = emb
    sd[f"{side}.position_enc.pos_table"] = torch.randn(1, npos, d)
    for i in range(n):
        p = f"{side}.layer_stack.{i}."
        for a in attns:
            for w in ("w_qs", "w_ks", "w_vs", "fc"):
                sd[f"{p}{a}.{w}.weight"] = torch.randn(d, d, dtype=torch.float64)
            sd[f"{p}{a}.layer_norm.weight"] = torch.randn(d)
            sd[f"{p}{a}.layer_norm.bias"] = torch.randn(d)
        sd[p + "pos_ffn.w_1.weight"] = torch.randn(ff, d)
        sd[p + "pos_ffn.w_1.bias"] = torch.randn(ff)
        sd[p + "pos_ffn.w_2.weight"] = torch.randn(d, ff)
        sd[p + "pos_ffn.w_2.bias"] = torch.randn(d)
        sd[p + "pos_ffn.layer_norm.weight"] = torch.randn(d)
        sd[p + "pos_ffn.layer_norm.bias"] = torch.randn(d)
    sd[side + ".layer_norm.weight"] = torch.randn(d)
    sd[side + ".layer_norm.bias"] = torch.randn(d)
sd["trg_word_prj.weight"] = emb
sd["extra.five_d"] = torch.randn(2, 1, 3, 1, 2)
save("jadore", {"model": sd}, ref_of(sd))

# 7. Names of no lesson.
sd = R([("foo.weight", torch.randn(3, 4)), ("foo.bias", torch.randn(3)),
        ("bar", torch.randn(2, 2, 2))])
save("unrelated", sd, ref_of(sd))

# 8. nanoGPT: a raw state_dict with biases and the attn.bias mask buffers (older PyTorch), wte
#    and lm_head one tensor; then train.py's ckpt.pt of a bias=False model after torch.compile
#    ('_orig_mod.' keys, model_args, a 'config' of training settings), and broken model_args.
def nanogpt_sd(n_layer, n_embd, vocab, block, bias, buffers):
    sd = R()
    wte = torch.randn(vocab, n_embd)
    sd["transformer.wte.weight"] = wte
    sd["transformer.wpe.weight"] = torch.randn(block, n_embd)
    shapes = (("ln_1", (n_embd,)), ("attn.c_attn", (3 * n_embd, n_embd)),
              ("attn.c_proj", (n_embd, n_embd)), ("ln_2", (n_embd,)),
              ("mlp.c_fc", (4 * n_embd, n_embd)), ("mlp.c_proj", (n_embd, 4 * n_embd)))
    for i in range(n_layer):
        p = f"transformer.h.{i}."
        for name, shape in shapes:
            sd[p + name + ".weight"] = torch.randn(*shape)
            if bias:
                sd[p + name + ".bias"] = torch.randn(shape[0])
            if buffers and name == "ln_1":
                sd[p + "attn.bias"] = torch.tril(torch.ones(block, block)).view(1, 1, block, block)
    sd["transformer.ln_f.weight"] = torch.randn(n_embd)
    if bias:
        sd["transformer.ln_f.bias"] = torch.randn(n_embd)
    sd["lm_head.weight"] = wte
    return sd


sd = nanogpt_sd(2, 8, 11, 6, True, True)
save("ngpt", sd, ref_of(sd))
sd = nanogpt_sd(3, 8, 7, 5, False, False)
args = dict(n_layer=3, n_head=2, n_embd=8, block_size=5, bias=False, vocab_size=7, dropout=0.0)
ckpt = {"model": R(("_orig_mod." + k, v) for k, v in sd.items()), "model_args": args,
        "iter_num": 5000, "best_val_loss": 1.5, "config": {"batch_size": 12}}
save("nck", ckpt, ref_of(sd))
torch.save(dict(ckpt, model_args=dict(args, n_embd=16)), "nck_wide.pt")
torch.save(dict(ckpt, model_args=dict(args, n_layer="three")), "nck_bad.pt")

# Cases that must fail.
torch.save([torch.zeros(2)], "list.pt")
torch.save(R(), "empty.pt")
torch.save({"epoch": 3, "optimizer": {}}, "nomodel.pt")
torch.save(R([("a", torch.zeros(2, dtype=torch.int64)), ("b", torch.zeros(1, dtype=torch.bool))]),
           "ints.pt")
with open("text.pt", "w") as f:
    f.write("this is not a checkpoint\n")


class Private(nn.Module):  # lives in __main__: a whole pickle of it cannot be loaded elsewhere
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(4, 4)


torch.save(Private(), "private.pt")
EOF
if ! "$PY" make.py; then
    fail "building the test checkpoints"
    echo "$passed passed, $failed failed"
    exit 1
fi

# ---------------------------------------------------------------------------------------------
# The independent reader: check.py OUT.safetensors REF.pt 'EXPECTED_METADATA_JSON' (or @FILE)
cat > check.py <<'EOF'
import json
import math
import struct
import sys

import numpy as np
import torch

path, ref_path, want_meta = sys.argv[1], sys.argv[2], sys.argv[3]
if want_meta.startswith("@"):
    with open(want_meta[1:], encoding="utf-8") as f:
        want_meta = f.read()
want_meta = json.loads(want_meta)
problems = []
try:
    data = open(path, "rb").read()
except OSError as exc:
    sys.exit(f"    {path}: {exc.strerror}")
if len(data) < 8:
    sys.exit(f"{path}: {len(data)} bytes, shorter than the length field")
(n,) = struct.unpack("<Q", data[:8])
if 8 + n > len(data):
    sys.exit(f"{path}: header length {n} runs past the end ({len(data)} bytes)")
if (8 + n) % 8:
    problems.append(f"8 + header length {n} is not a multiple of 8")
raw = data[8:8 + n]
text = raw.decode("utf-8")
if text.rstrip(" ") != text.strip() or not text.startswith("{"):
    problems.append("the header is not a JSON object padded with trailing spaces")
header = json.loads(text)
meta = header.pop("__metadata__", None)
if not isinstance(meta, dict):
    problems.append("no __metadata__ object")
    meta = {}
if not all(isinstance(v, str) for v in meta.values()):
    problems.append(f"metadata values that are not strings: {meta}")
if want_meta is not None and meta != want_meta:
    problems.append(f"metadata {json.dumps(meta, sort_keys=True)}\n"
                    f"      wanted {json.dumps(want_meta, sort_keys=True)}")

ref = torch.load(ref_path)
if set(header) != set(ref):
    problems.append(f"names: missing {sorted(set(ref) - set(header))}, "
                    f"extra {sorted(set(header) - set(ref))}")
by_offset = sorted(header, key=lambda k: header[k]["data_offsets"][0])
if by_offset != sorted(header):
    problems.append("the tensors are not stored in name order")
pos = 0
body = data[8 + n:]
for name in by_offset:
    e = header[name]
    if set(e) != {"dtype", "shape", "data_offsets"} or e["dtype"] != "F32":
        problems.append(f"{name}: entry {e}")
        continue
    begin, end = e["data_offsets"]
    if begin != pos:
        problems.append(f"{name}: begins at {begin}, not right after the last tensor ({pos})")
    if end - begin != 4 * math.prod(e["shape"]):
        problems.append(f"{name}: {end - begin} bytes for shape {e['shape']}")
    pos = end
    if name not in ref:
        continue
    want = ref[name]
    if list(want.shape) != e["shape"]:
        problems.append(f"{name}: shape {e['shape']}, wanted {list(want.shape)}")
        continue
    got = np.frombuffer(body[begin:end], dtype="<u4")
    exp = want.numpy().astype("<f4").view("<u4").reshape(-1)
    if not np.array_equal(got, exp):
        bad = int(np.flatnonzero(got != exp)[0])
        problems.append(f"{name}: element {bad} has bits {got[bad]:#010x}, wanted {exp[bad]:#010x}")
if pos != len(body):
    problems.append(f"the data section holds {len(body)} bytes; the tensors use {pos}")
for p in problems:
    print("   ", p)
sys.exit(1 if problems else 0)
EOF

# conv NAME ARGS...: runs the converter; keeps stderr in NAME.err and the status in $rc.
conv() {
    local name=$1
    shift
    "$PY" "$CONV" "$@" > "$name.out" 2> "$name.err"
    rc=$?
}
# expect_rc WHAT WANT
expect_rc() {
    if [ "$rc" -eq "$2" ]; then pass "$1: exit $2"
    else fail "$1: exit $rc, wanted $2"; sed 's/^/    /' "$3"; fi
}
# expect_err WHAT NAME FIXED-STRING: stderr of run NAME holds the string.
expect_err() {
    if grep -qF -- "$3" "$2.err"; then pass "$1"; else
        fail "$1: stderr lacks: $3"; sed 's/^/    /' "$2.err"; fi
}
expect_no_err() {
    if ! grep -qF -- "$3" "$2.err"; then pass "$1"; else fail "$1: stderr holds: $3"; fi
}
# check WHAT OUT REF METADATA_JSON
check() {
    if "$PY" check.py "$2" "$3" "$4"; then pass "$1: names, shapes, bits, metadata, packing"
    else fail "$1: the file read back differs"; fi
}

# --- 1. nn.Transformer layout, 'module.' prefix, vocabulary from a file ---------------------------
printf '["<unk>","<pad>","<bos>","<eos>","a","b","c","d","\\u00e9"]' > src_vocab.json
conv nnt nnt.pt nnt.safetensors --config "nhead=2, norm_first=false" --tokens-src src_vocab.json \
     --tokens-tgt '{"x": 1, "<unk>": 0, "y": 2, "z": 3, "w": 4, "v": 5, "u": 6, "t": 7, "s": 8,
                    "r": 9, "q": 10}'
expect_rc "nn.Transformer state_dict" 0 nnt.err
check "nn.Transformer state_dict" nnt.safetensors nnt.ref.pt @nnt.meta.json
expect_err "nn.Transformer: best match (norm_first=false)" nnt \
    "matches lessons/forward-pass.md: 51 of 51 tensors ($RUN lessons/forward-pass.md $(
    )--model nnt.safetensors)"
expect_err "nn.Transformer: 'module.' prefix stripped" nnt "every key starts with 'module.'"
expect_err "nn.Transformer: integer buffer skipped" nnt "num_batches_tracked (int64)"
expect_err "nn.Transformer: non-tensor entry skipped" nnt "step (int)"
expect_err "nn.Transformer: conversions noted" nnt \
    "converted to float32: 1 float16 tensor, 1 float64 tensor"
expect_err "nn.Transformer: inferred sizes named" nnt \
    "inferred from the tensor shapes: num_encoder_layers=2 num_decoder_layers=1 d_model=16 $(
    )src_vocab_size=9 tgt_vocab_size=11 dim_feedforward=24 max_positions=40"
expect_no_err "nn.Transformer: no nhead note when given" nnt "nhead is not inferred"

# --- 2. the same layout, pre-norm, whole pickled module; norm_first unknown, then known -----------
conv pre1 prenorm.pt prenorm.safetensors
expect_rc "whole nn.Module" 0 pre1.err
check "whole nn.Module" prenorm.safetensors prenorm.ref.pt '{"num_encoder_layers": "2",
  "num_decoder_layers": "1", "d_model": "16", "src_vocab_size": "9", "tgt_vocab_size": "11",
  "dim_feedforward": "24", "max_positions": "40"}'
expect_err "whole nn.Module: both standard lessons fit" pre1 \
    "matches lessons/forward-pass.md or lessons/pre-norm.md: 51 of 51 tensors ($RUN $(
    )lessons/forward-pass.md --model prenorm.safetensors --config \"nhead=N\")"
expect_err "whole nn.Module: says both fit" pre1 "both standard lessons fit"
expect_err "whole nn.Module: nhead never guessed" pre1 "nhead is not inferred"
expect_err "whole nn.Module: noted" pre1 "took the state_dict of a whole pickled Module"
conv pre2 prenorm.pt prenorm2.safetensors --config "norm_first=true nhead=4"
expect_err "norm_first=true -> pre-norm lesson" pre2 \
    "matches lessons/pre-norm.md: 51 of 51 tensors ($RUN lessons/pre-norm.md $(
    )--model prenorm2.safetensors)"

# --- 3. Annotated Transformer in {"state_dict": ...}, tied weights --------------------------------
conv ann annotated.pt annotated.safetensors
expect_rc "Annotated Transformer" 0 ann.err
check "Annotated Transformer" annotated.safetensors annotated.ref.pt '{"num_encoder_layers": "2",
  "num_decoder_layers": "1", "d_model": "16", "src_vocab_size": "13", "tgt_vocab_size": "17",
  "dim_feedforward": "32", "max_positions": "30"}'
expect_err "Annotated Transformer: best match" ann \
    "matches lessons/annotated-transformer.md: 68 of 68 tensors ($RUN $(
    )lessons/annotated-transformer.md --model annotated.safetensors --config \"nhead=N\")"
expect_err "Annotated Transformer: wrapped state_dict noted" ann "from the 'state_dict' entry"
expect_err "Annotated Transformer: config entry not read" ann "'config' entry is not read"
expect_err "Annotated Transformer: tied tensors noted" ann \
    "generator.proj.weight, tgt_embed.0.lut.weight share storage"

# --- 4. Bloem's classifier, whole pickled module, a non-contiguous parameter ----------------------
conv bloem bloem.pt bloem.safetensors --config nhead=3
expect_rc "Bloem classifier" 0 bloem.err
check "Bloem classifier" bloem.safetensors bloem.ref.pt '{"nhead": "3", "num_encoder_layers": "3",
  "d_model": "12", "src_vocab_size": "50", "max_positions": "20", "dim_feedforward": "48",
  "num_classes": "5"}'
expect_err "Bloem classifier: best match" bloem \
    "matches lessons/transformers-from-scratch.md: 43 of 43 tensors"

# --- 5. encoder from scratch: 'model.' prefix in {"model_state_dict": ...}, imperfect match -------
conv efs efs.pt efs.safetensors
expect_rc "encoder from scratch" 0 efs.err
check "encoder from scratch" efs.safetensors efs.ref.pt '{"num_encoder_layers": "2", "d_model": "8",
  "src_vocab_size": "21", "dim_feedforward": "20"}'
expect_err "encoder from scratch: best match" efs \
    "matches lessons/encoder-from-scratch.md: 24 of 25 tensors"
expect_err "encoder from scratch: missing listed" efs "1 expected but missing: layers.1.norm2.beta"
expect_err "encoder from scratch: unexpected listed" efs "1 unexpected: classifier.weight"
expect_err "encoder from scratch: 'model.' prefix stripped" efs "every key starts with 'model.'"
expect_err "encoder from scratch: args entry not read" efs "'args' entry is not read"

# --- 6. attention-is-all-you-need-pytorch: shared embeddings, float64, a 5-D tensor ---------------
conv jad jadore.pt jadore.safetensors --config "nhead=2"
expect_rc "jadore801120" 0 jad.err
check "jadore801120" jadore.safetensors jadore.ref.pt '{"nhead": "2", "num_encoder_layers": "1",
  "num_decoder_layers": "2", "d_model": "8", "src_vocab_size": "19", "tgt_vocab_size": "19",
  "dim_feedforward": "16", "max_positions": "25"}'
expect_err "jadore801120: best match" jad \
    "matches lessons/attention-is-all-you-need-pytorch.md: 57 of 58 tensors"
expect_err "jadore801120: 5-D tensor warned" jad "tensor 'extra.five_d' has 5 dimensions"
expect_err "jadore801120: three-way tie noted" jad \
    "decoder.trg_word_emb.weight, encoder.src_word_emb.weight, trg_word_prj.weight share storage"

# --- 7. names of no lesson ----------------------------------------------------------------------
conv unrel unrelated.pt unrelated.safetensors --config "note=kept"
expect_rc "unknown layout still written" 0 unrel.err
check "unknown layout" unrelated.safetensors unrelated.ref.pt '{"note": "kept"}'
expect_err "unknown layout: said so" unrel "no known layout matches over half of the tensors"

# --- 8. nanoGPT ----------------------------------------------------------------------------------
conv ngpt ngpt.pt ngpt.safetensors
expect_rc "nanoGPT state_dict" 0 ngpt.err
check "nanoGPT state_dict" ngpt.safetensors ngpt.ref.pt '{"n_layer": "2", "n_embd": "8",
  "vocab_size": "11", "block_size": "6", "bias": "1"}'
expect_err "nanoGPT: best match, buffers and biases included" ngpt \
    "matches lessons/nanogpt.md: 31 of 31 tensors ($RUN lessons/nanogpt.md $(
    )--model ngpt.safetensors --config \"n_head=N\")"
expect_err "nanoGPT: n_head never guessed" ngpt "n_head is not inferred"
expect_err "nanoGPT: tied head noted" ngpt "lm_head.weight, transformer.wte.weight share storage"
conv nck nck.pt nck.safetensors
expect_rc "nanoGPT ckpt.pt" 0 nck.err
check "nanoGPT ckpt.pt: model_args in the metadata" nck.safetensors nck.ref.pt '{"n_layer": "3",
  "n_head": "2", "n_embd": "8", "block_size": "5", "vocab_size": "7", "bias": "0"}'
expect_err "nanoGPT ckpt.pt: model_args read" nck \
    "read the checkpoint's model_args: n_layer=3 n_head=2 n_embd=8 block_size=5 vocab_size=7 bias=0"
expect_err "nanoGPT ckpt.pt: '_orig_mod.' stripped" nck "every key starts with '_orig_mod.'"
expect_err "nanoGPT ckpt.pt: no biases, still the layout" nck \
    "matches lessons/nanogpt.md: 22 of 22 tensors ($RUN lessons/nanogpt.md --model nck.safetensors)"
expect_no_err "nanoGPT ckpt.pt: no n_head note" nck "n_head is not inferred"
expect_no_err "nanoGPT ckpt.pt: its training config is not asked about" nck "'config' entry"
conv nck2 nck.pt nck2.safetensors --config "n_head=4"
expect_err "nanoGPT ckpt.pt: --config over model_args, said" nck2 \
    "--config says n_head=4, but the checkpoint's model_args say 2; written as given"
conv nckw nck_wide.pt nckw.safetensors
expect_err "nanoGPT ckpt.pt: model_args against the shapes" nckw \
    "the checkpoint's model_args says n_embd=16, but the tensor shapes say 8"
conv nckb nck_bad.pt nckb.safetensors
expect_rc "nanoGPT ckpt.pt: model_args of the wrong kind" 1 nckb.err
expect_err "nanoGPT ckpt.pt: the bad item named" nckb \
    "nck_bad.pt: model_args['n_layer'] is 'three', not a whole number"

# --- the C side, when a build is at hand, loads the clean outputs with their lessons -------------
if [ -x "$ROOT/build/stepformer" ]; then
    for c in "nnt forward-pass" "prenorm2 pre-norm" "annotated annotated-transformer nhead=4" \
             "bloem transformers-from-scratch" "ngpt nanogpt n_head=2" "nck nanogpt"; do
        read -r model lesson cfg <<< "$c"
        extra=()
        if [ -n "$cfg" ]; then extra=(--config "$cfg"); fi
        if "$ROOT/build/stepformer" stages --model "$model.safetensors" \
               --program "$ROOT/lessons/$lesson.md" "${extra[@]}" > "c-$model.out" 2> "c-$model.err"
        then pass "build/stepformer stages loads $model.safetensors with lessons/$lesson.md"
        else fail "build/stepformer, lessons/$lesson.md: $(head -1 "c-$model.err")"; fi
    done
else
    echo "skip build/stepformer is not built: the C side does not load the outputs"
fi

bad_err=
# --- errors ---------------------------------------------------------------------------------------
conv e1 does-not-exist.pt out1.safetensors
expect_rc "missing checkpoint" 1 e1.err
expect_err "missing checkpoint: message names it" e1 "does-not-exist.pt: cannot read"
conv e2 nnt.pt out2.safetensors --config "nhead=2 oops"
expect_rc "malformed --config item" 1 e2.err
expect_err "malformed --config item: named" e2 "item 'oops' should be key=value"
conv e3 nnt.pt out3.safetensors --config "nhead=two"
expect_rc "non-integer nhead" 1 e3.err
conv e4
expect_rc "no arguments" 2 e4.err
conv e5 nnt.pt out5.safetensors --bogus
expect_rc "unknown option" 2 e5.err
conv e6 --help
expect_rc "--help" 0 e6.err
if grep -q "usage:" e6.out && grep -q "annotated-transformer.md" e6.out; then
    pass "--help: usage and layouts"
else fail "--help: usage and layouts"; fi
conv e7 list.pt out7.safetensors
expect_rc "a pickled list" 1 e7.err
expect_err "a pickled list: says what it found" e7 "list.pt: found a list"
conv e8 empty.pt out8.safetensors
expect_rc "empty state_dict" 1 e8.err
expect_err "empty state_dict: said" e8 "empty.pt: the state_dict is empty"
conv e9 nomodel.pt out9.safetensors
expect_rc "dict without a model" 1 e9.err
expect_err "dict without a model: keys named" e9 \
    "nomodel.pt: found a dict with keys 'epoch', 'optimizer'"
conv e10 ints.pt out10.safetensors
expect_rc "only integer tensors" 1 e10.err
conv e11 text.pt out11.safetensors
expect_rc "not a checkpoint" 1 e11.err
expect_err "not a checkpoint: named" e11 "text.pt: cannot load as a PyTorch checkpoint"
conv e12 private.pt out12.safetensors
expect_rc "whole model of an unimportable class" 1 e12.err
expect_err "whole model of an unimportable class: explained" e12 \
    "(class Private of module __main__); save model.state_dict() instead"
conv e13 nnt.pt no-such-dir/out.safetensors
expect_rc "unwritable output" 1 e13.err
expect_err "unwritable output: named" e13 "no-such-dir/out.safetensors: cannot write"
mkdir -p adir
conv e14 nnt.pt adir
expect_rc "output is a directory" 1 e14.err
conv e15 nnt.pt out15.safetensors --tokens-src '["a", "b"]'
expect_rc "vocabulary of the wrong size" 1 e15.err
expect_err "vocabulary of the wrong size: said" e15 \
    "--tokens-src: 2 tokens, but src_vocab_size is 9"
for e in e1 e2 e3 e7 e8 e9 e10 e11 e12 e13 e14 e15; do
    if grep -q Traceback "$e.err" || ! tail -1 "$e.err" | grep -q "^torch2st: [^ ]*:"; then
        bad_err="$bad_err $e"
    fi
done
if [ -z "${bad_err:-}" ]; then pass "each failure ends with one line naming the file or option"
else fail "failures without a final one-line message:$bad_err"; fi
left=$(find . -maxdepth 2 \( -name 'out*.safetensors' -o -name '.torch2st-*' \) | head -1)
if [ -n "$left" ]; then
    fail "a failed run left a file behind: $left"
else pass "failed runs leave no file behind"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
