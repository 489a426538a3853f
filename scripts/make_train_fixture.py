#!/usr/bin/python3
"""Generate the PyTorch reference for one training step of stepformer's C trainer.

Writes tests/fixtures/train_step.safetensors: a randomized tutorial
Seq2SeqTransformer, a padded batch of 3 sequences, and what one training step
of PyTorch computes on it: the loss, the gradient of every parameter, and every
parameter after one Adam step.

Run with the system interpreter (it has python3-torch and python3-numpy):

  /usr/bin/python3 scripts/make_train_fixture.py          # generate, then check
  /usr/bin/python3 scripts/make_train_fixture.py --check  # only re-read and check

Conventions (model class, randomization, safetensors writer and reader,
metadata keys) are those of scripts/make_fixtures.py, imported from it.
Everything is seeded and single-threaded, so a rerun gives identical bytes.
"""

import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402

PAD_ID, BOS_ID, EOS_ID = mf.PAD_ID, mf.BOS_ID, mf.EOS_ID
FIRST_WORD_ID = mf.FIRST_WORD_ID

CFG = dict(name="train_step", seed=3107, kind="torch", d_model=16, nhead=4,
           n_enc=2, n_dec=2, d_ff=32, src_vocab=13, tgt_vocab=11,
           activation="relu", norm_first=False, eps=1e-5, metadata=True)
PE_MAXLEN = 16

SRC_LENS = [6, 4, 2]      # non-pad tokens per src row; S = max
TGT_LENS = [5, 3, 2]      # non-pad tokens per tgt_in (= per tgt_out) row; T = max
S, T = max(SRC_LENS), max(TGT_LENS)

LABEL_SMOOTHING = 0.1
LR, BETA1, BETA2, ADAM_EPS = 1e-3, 0.9, 0.98, 1e-9

OUT_NAME = "train_step.safetensors"

# Acceptance rule for a draw (model and batch come from one seed; a rejected
# draw is redrawn with the next seed, as make_fixtures.py does). It keeps the
# fixture away from the places where float32 round-off decides the answer:
MIN_GRAD = 1e-6        # every gradient element is exactly 0 or |g| >= MIN_GRAD,
                       # except the attention key-bias slices (see KEY_BIAS below)
MIN_PREACT = 1e-5      # every ReLU input is >= MIN_PREACT away from the kink
MAX_ATTEMPTS = 100


# --------------------------------------------------------------------------
# model and batch
# --------------------------------------------------------------------------

class BatchedSeq2Seq(mf.Seq2SeqTransformer):
    """make_fixtures' Seq2SeqTransformer with a PE table of PE_MAXLEN rows and
    the tutorial's batched forward (ids given as [B, L], run sequence-first)."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.positional_encoding = mf.PositionalEncoding(cfg["d_model"], PE_MAXLEN)

    def forward_batch(self, src, tgt_in):
        """src [B, S], tgt_in [B, T] (long) -> logits [T, B, V]."""
        src_sb, tgt_tb = src.t(), tgt_in.t()                       # [S, B], [T, B]
        s, t = src_sb.size(0), tgt_tb.size(0)
        # the tutorial's create_mask
        src_mask = torch.zeros((s, s), dtype=torch.bool)
        tgt_mask = mf.causal_mask(t)
        src_padding_mask = (src_sb == PAD_ID).transpose(0, 1)      # [B, S]
        tgt_padding_mask = (tgt_tb == PAD_ID).transpose(0, 1)      # [B, T]
        src_emb = self.positional_encoding(self.src_tok_emb(src_sb))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(tgt_tb))
        out = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                               src_padding_mask, tgt_padding_mask, src_padding_mask)
        return self.generator(out)


def build_model(seed, dtype=torch.float32):
    torch.manual_seed(seed)
    model = BatchedSeq2Seq(CFG)
    mf.randomize(model)
    model.train()          # dropout is 0; train() keeps nn.Transformer off its fast path
    return model.to(dtype)


def make_batch(seed):
    """src [3, S], tgt_in [3, T], tgt_out [3, T] as long tensors.

    src rows are ordinary words (ids >= 4) then pad. For each row the full
    target is [bos, w_1 .. w_{n-1}, eos]; tgt_in drops its last token and
    tgt_out its first, both padded to T."""
    g = torch.Generator().manual_seed(seed * 10 + 1)
    src = torch.full((len(SRC_LENS), S), PAD_ID, dtype=torch.long)
    tgt_in = torch.full((len(TGT_LENS), T), PAD_ID, dtype=torch.long)
    tgt_out = torch.full((len(TGT_LENS), T), PAD_ID, dtype=torch.long)
    for b, n in enumerate(SRC_LENS):
        src[b, :n] = torch.randint(FIRST_WORD_ID, CFG["src_vocab"], (n,), generator=g)
    for b, n in enumerate(TGT_LENS):
        words = torch.randint(FIRST_WORD_ID, CFG["tgt_vocab"], (n - 1,), generator=g)
        full = torch.cat([torch.tensor([BOS_ID]), words, torch.tensor([EOS_ID])])
        tgt_in[b, :n] = full[:-1]
        tgt_out[b, :n] = full[1:]
    return src, tgt_in, tgt_out


def loss_of(model, src, tgt_in, tgt_out):
    logits = model.forward_batch(src, tgt_in)                          # [T, B, V]
    v = logits.size(-1)
    flat = logits.transpose(0, 1).reshape(-1, v)                       # [B*T, V], row b*T+t
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=LABEL_SMOOTHING)
    return loss_fn(flat, tgt_out.reshape(-1)), flat


def train_step(model, src, tgt_in, tgt_out):
    """forward, loss, backward, one Adam step. Returns (loss, logits, grads, after)."""
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(BETA1, BETA2), eps=ADAM_EPS)
    opt.zero_grad()
    loss, flat = loss_of(model, src, tgt_in, tgt_out)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()
             if p.grad is not None}
    opt.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return loss.detach().clone(), flat.detach().clone(), grads, after


# --------------------------------------------------------------------------
# independent checks
# --------------------------------------------------------------------------

def check_loss_by_hand(flat, tgt_out, loss):
    """Label-smoothed CE with ignore_index, recomputed in float64 numpy."""
    x = flat.double().numpy()
    y = tgt_out.reshape(-1).numpy()
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    keep = y != PAD_ID
    v = x.shape[1]
    per_row = -(1 - LABEL_SMOOTHING) * logp[keep, y[keep]] \
        - (LABEL_SMOOTHING / v) * logp[keep].sum(1)
    ref = per_row.mean()
    assert abs(ref - float(loss)) <= 1e-6 * abs(ref), (ref, float(loss))
    return ref


def check_adam_by_hand(before, grads, after):
    """Adam's first step, written out in float32 numpy, against torch."""
    worst = 0.0
    for n, g in grads.items():
        g = g.numpy().astype(np.float32)
        p = before[n].numpy().astype(np.float32)
        m = np.float32(1 - BETA1) * g
        v = np.float32(1 - BETA2) * g * g
        bc1 = 1 - BETA1
        bc2 = 1 - BETA2
        denom = np.sqrt(v) / np.float32(math.sqrt(bc2)) + np.float32(ADAM_EPS)
        ref = p - np.float32(LR / bc1) * (m / denom)
        diff = float(np.abs(ref - after[n].numpy()).max())
        worst = max(worst, diff)
        assert diff <= 1e-7, (n, diff)
    return worst


def float64_twin(seed, state, src, tgt_in, tgt_out):
    """The same step in float64: how well-conditioned is each float32 gradient?"""
    model = build_model(seed, torch.float64)
    model.load_state_dict({k: v.double() for k, v in state.items()}, strict=True)
    loss, _ = loss_of(model, src, tgt_in, tgt_out)
    loss.backward()
    return float(loss), {n: p.grad.detach().clone() for n, p in model.named_parameters()}


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def key_bias_mask(name, g):
    """True where g is the key slice of an in_proj_bias gradient.

    Softmax is invariant to adding one constant to a whole row of scores, and
    the key bias b_k adds q.b_k to every score of query q, so d loss / d b_k is
    exactly 0 in exact arithmetic; float32 leaves round-off of about 1e-9
    there, which Adam (eps 1e-9) turns into updates of up to lr."""
    m = torch.zeros_like(g, dtype=torch.bool)
    if name.endswith("in_proj_bias"):
        d = CFG["d_model"]
        m[d:2 * d] = True
    return m


def draw(seed):
    """Model + batch from one seed and the training step on them."""
    model = build_model(seed)
    state = model.export_state()
    src, tgt_in, tgt_out = make_batch(seed)
    preacts = []
    hooks = [m.register_forward_hook(lambda mod, args, out: preacts.append(out.detach().clone()))
             for name, m in model.named_modules() if name.endswith("linear1")]
    try:
        loss, flat, grads, after = train_step(model, src, tgt_in, tgt_out)
    finally:
        for h in hooks:
            h.remove()
    assert len(preacts) == CFG["n_enc"] + CFG["n_dec"]
    min_preact = min(float(x.abs().min()) for x in preacts)
    small = 0
    for n, g in grads.items():
        a = g.abs()[~key_bias_mask(n, g)]
        small += int(((a > 0) & (a < MIN_GRAD)).sum())
    ok = small == 0 and min_preact >= MIN_PREACT
    return ok, dict(model=model, state=state, src=src, tgt_in=tgt_in, tgt_out=tgt_out,
                    loss=loss, flat=flat, grads=grads, after=after,
                    small=small, min_preact=min_preact)


def generate(out_dir):
    for attempt in range(MAX_ATTEMPTS):
        seed = CFG["seed"] + attempt
        ok, r = draw(seed)
        if ok:
            break
        print("seed %d rejected: %d gradient elements in (0, %g), min |relu input| %.3g"
              % (seed, r["small"], MIN_GRAD, r["min_preact"]))
    else:
        raise RuntimeError("no acceptable draw in %d attempts" % MAX_ATTEMPTS)
    model, state = r["model"], r["state"]
    src, tgt_in, tgt_out = r["src"], r["tgt_in"], r["tgt_out"]
    loss, flat, grads, after = r["loss"], r["flat"], r["grads"], r["after"]
    assert set(state) == set(n for n, _ in model.named_parameters()) | \
        {"positional_encoding.pos_embedding"}
    assert state["positional_encoding.pos_embedding"].shape == (PE_MAXLEN, 1, CFG["d_model"])
    assert [int((src[b] != PAD_ID).sum()) for b in range(len(SRC_LENS))] == SRC_LENS
    assert [int((tgt_in[b] != PAD_ID).sum()) for b in range(len(TGT_LENS))] == TGT_LENS
    assert [int((tgt_out[b] != PAD_ID).sum()) for b in range(len(TGT_LENS))] == TGT_LENS

    # --- assertions -------------------------------------------------------
    assert bool(torch.isfinite(loss).all()) and bool(torch.isfinite(flat).all())
    assert set(grads) == set(n for n, _ in model.named_parameters()), "missing gradients"
    for n, g in grads.items():
        assert bool(torch.isfinite(g).all()), "non-finite gradient " + n
        assert float(g.abs().max()) > 0.0, "all-zero gradient " + n
        assert bool(torch.isfinite(after[n]).all()), "non-finite update " + n
        assert not torch.equal(after[n], state[n]), "parameter not updated " + n
    assert "positional_encoding.pos_embedding" not in grads
    loss_ref = check_loss_by_hand(flat, tgt_out, loss)
    adam_diff = check_adam_by_hand(state, grads, after)
    loss64, grads64 = float64_twin(seed, state, src, tgt_in, tgt_out)
    assert abs(loss64 - float(loss)) <= 1e-6 * abs(loss64), (loss64, float(loss))

    # --- write ------------------------------------------------------------
    tensors = dict(state)
    tensors["src"] = src.float()
    tensors["tgt_in"] = tgt_in.float()
    tensors["tgt_out"] = tgt_out.float()
    tensors["loss"] = loss.reshape(1)
    for n, g in grads.items():
        tensors["grad." + n] = g
        tensors["after." + n] = after[n]
    meta = mf.model_metadata(CFG)
    meta.update({"seed": str(seed), "label_smoothing": str(LABEL_SMOOTHING), "lr": str(LR),
                 "beta1": str(BETA1), "beta2": str(BETA2), "adam_eps": str(ADAM_EPS)})
    path = os.path.join(out_dir, OUT_NAME)
    mf.write_safetensors(path, tensors, meta)

    # --- report -----------------------------------------------------------
    print("seed %d (attempt %d), min |relu input| %.3g" % (seed, attempt + 1, r["min_preact"]))
    print("src     %s" % src.tolist())
    print("tgt_in  %s" % tgt_in.tolist())
    print("tgt_out %s" % tgt_out.tolist())
    print("loss %.9g  (float64 by hand from the logits %.9g, float64 model %.9g)"
          % (float(loss), loss_ref, loss64))
    print("Adam step re-done in numpy: max |diff| %.3g" % adam_diff)
    print("%-52s %8s %10s %10s %10s" % ("gradient", "numel", "max|g|", "min|g|>0",
                                       "f32-f64"))
    for n in sorted(grads):
        g = grads[n]
        nz = g.abs()[g != 0]
        err = float((g.double() - grads64[n]).abs().max())
        print("%-52s %8d %10.3g %10.3g %10.3g" % (n, g.numel(), float(g.abs().max()),
                                                  float(nz.min()), err))
    # theoretically-zero gradients: every attention's key bias (softmax is
    # invariant to adding q.b_k to every score of a row)
    for n in sorted(grads):
        if n.endswith("in_proj_bias"):
            km = key_bias_mask(n, grads[n])
            kb32 = float(grads[n][km].abs().max())
            kb64 = float(grads64[n][km].abs().max())
            print("key-bias slice of %-40s max|g| f32 %.3g  f64 %.3g" % (n, kb32, kb64))
    return [path]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures"),
                    help="output directory (default: tests/fixtures)")
    ap.add_argument("--check", action="store_true",
                    help="only re-read and validate " + OUT_NAME + " in --out")
    args = ap.parse_args()
    out_dir = os.path.normpath(args.out)

    t0 = time.time()
    if args.check:
        paths = [os.path.join(out_dir, OUT_NAME)]
    else:
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)
        os.makedirs(out_dir, exist_ok=True)
        paths = generate(out_dir)
    mf.check_all(paths)
    print("done in %.2f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
