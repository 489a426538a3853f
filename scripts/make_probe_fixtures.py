#!/usr/bin/python3
"""Reference numbers for activation patching and the logit lens (src/train/probe.h).

On the bundled dates model (assets/models/dates.safetensors, the standard post-norm program),
loaded into the PyTorch model of scripts/make_fixtures.py (nn.Transformer): a clean source
and a corrupted one of the same length, the decoder teacher-forced on <bos> + the target but
its last character, and the logit of that last character at the last row.

Patching: a forward hook on each encoder and decoder layer replaces one position's row of the
corrupted pass's layer output with the clean pass's, and the rest runs on; the effect is
(patched - corrupted) / (clean - corrupted). The logit lens: each decoder layer's output sent
through transformer.decoder.norm and the generator, the likeliest token and its probability at
each position.

Writes tests/fixtures/probe/dates.safetensors: clean_ids [S], corrupt_ids [S], tgt_ids [T],
token [1], clean_logit [1], corrupt_logit [1], effect.encoder [layers, S], effect.decoder
[layers, T], attribution.encoder / .decoder (the same shapes: the gradient of the corrupted
logit at each layer output, dotted with clean - corrupted per position, over clean - corrupted),
lens.top [layers, T] (ids), lens.p [layers, T], and effect.heads [attentions, heads]: each
attention's heads patched one at a time (the encoder's self-attentions, then each decoder layer's
self- and cross-attention), through nn.MultiheadAttention's forward written out op by op (it is
asserted to give the model's own logit), all float32.

    /usr/bin/python3 scripts/make_probe_fixtures.py
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402
import make_seed_fixtures as msf  # noqa: E402

ROOT = os.path.dirname(HERE)
CLEAN, CORRUPT, TARGET = "22 November 2026", "22 December 2026", "2026-11"


def load():
    _, meta, state = msf.read_safetensors(os.path.join(ROOT, "assets", "models", "dates.safetensors"))
    cfg = dict(d_model=int(meta["d_model"]), nhead=int(meta["nhead"]), n_enc=int(meta["num_encoder_layers"]),
               n_dec=int(meta["num_decoder_layers"]), d_ff=int(meta["dim_feedforward"]),
               src_vocab=int(meta["src_vocab_size"]), tgt_vocab=int(meta["tgt_vocab_size"]),
               activation=meta["activation"], norm_first=meta["norm_first"] == "true",
               eps=float(meta["layer_norm_eps"]))
    mf.PE_MAXLEN = state["positional_encoding.pos_embedding"].shape[0]
    model = mf.Seq2SeqTransformer(cfg)
    model.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in state.items()})
    model.eval()
    src_ids = {t: i for i, t in enumerate(json.loads(meta["src_tokens"]))}
    tgt_ids = {t: i for i, t in enumerate(json.loads(meta["tgt_tokens"]))}
    return model, cfg, src_ids, tgt_ids, int(meta["bos_id"])


def run(model, src, tgt, hook_layer=None, row=None, value=None, capture=None):
    """logits [T, V]; optionally replacing row `row` of hook_layer's output with value[row]
    and/or capturing every layer's output into `capture`."""
    handles = []
    layers = list(model.transformer.encoder.layers) + list(model.transformer.decoder.layers)
    for layer in layers:
        def hook(module, args, output, layer=layer):
            if capture is not None:
                capture[layer] = output.detach().clone()
            if layer is hook_layer:
                output = output.clone()
                output[row] = value[row]
                return output
        handles.append(layer.register_forward_hook(hook))
    try:
        return model(src, tgt)
    finally:
        for h in handles:
            h.remove()


def manual_attention(mha, query, key, value, attn_mask=None, key_padding_mask=None, replace=None, keep=None, **_):
    """nn.MultiheadAttention's forward (sequence-first, batch of 1, no padding here) written out
    op by op, so one head's context can be kept (keep[name]) or replaced (replace = (h, ctx))."""
    d = mha.embed_dim
    H = mha.num_heads
    w, b = mha.in_proj_weight, mha.in_proj_bias
    q = query[:, 0] @ w[:d].T + b[:d]
    k = key[:, 0] @ w[d:2 * d].T + b[d:2 * d]
    v = value[:, 0] @ w[2 * d:].T + b[2 * d:]
    split = lambda x: x.view(x.shape[0], H, d // H).transpose(0, 1)  # [H, T, d_k]
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(1, 2) / (d // H) ** 0.5
    if attn_mask is not None:
        scores = scores + attn_mask
    ctx = torch.softmax(scores, dim=-1) @ v  # [H, T, d_k]
    if keep is not None:
        keep.append(ctx.detach().clone())
    if replace is not None:
        ctx = ctx.clone()
        ctx[replace[0]] = replace[1][replace[0]]
    out = ctx.transpose(0, 1).reshape(query.shape[0], d) @ mha.out_proj.weight.T + mha.out_proj.bias
    return out.unsqueeze(1), None


def head_sweep(model, clean, corrupt, tgt, token, clean_logit, corrupt_logit):
    """Every attention of the model, every head: its context patched from the clean run."""
    attns = [l.self_attn for l in model.transformer.encoder.layers]
    for l in model.transformer.decoder.layers:
        attns += [l.self_attn, l.multihead_attn]
    originals = {m: m.forward for m in attns}
    kept = {m: [] for m in attns}
    try:
        for m in attns:
            m.forward = lambda *a, m=m, **k: manual_attention(m, *a, keep=kept[m], **k)
        # the written-out attention gives the model's own logits
        assert abs(float(model(clean, tgt)[-1, token]) - clean_logit) < 1e-4
        effects = []
        for m in attns:
            row = []
            for h in range(m.num_heads):
                m.forward = lambda *a, m=m, h=h, **k: manual_attention(m, *a, replace=(h, kept[m][0]), **k)
                logit = float(model(corrupt, tgt)[-1, token])
                row.append((logit - corrupt_logit) / (clean_logit - corrupt_logit))
                m.forward = lambda *a, m=m, **k: manual_attention(m, *a, **k)
            effects.append(row)
        return effects
    finally:
        for m, f in originals.items():
            m.forward = f


def main():
    torch.set_num_threads(1)
    model, cfg, src_ids, tgt_ids, bos = load()
    clean = torch.tensor([src_ids[c] for c in CLEAN])
    corrupt = torch.tensor([src_ids[c] for c in CORRUPT])
    tgt = torch.tensor([bos] + [tgt_ids[c] for c in TARGET[:-1]])
    token = tgt_ids[TARGET[-1]]
    layers = list(model.transformer.encoder.layers) + list(model.transformer.decoder.layers)
    kept = {}
    clean_logit = float(run(model, clean, tgt, capture=kept)[-1, token])
    corrupt_logit = float(run(model, corrupt, tgt)[-1, token])
    effects = []
    for layer in layers:
        rows = kept[layer].shape[0]
        row_effects = []
        for p in range(rows):
            logit = float(run(model, corrupt, tgt, hook_layer=layer, row=p, value=kept[layer])[-1, token])
            row_effects.append((logit - corrupt_logit) / (clean_logit - corrupt_logit))
        effects.append(row_effects)
    # Attribution: d(corrupted logit)/d(layer output) . (clean - corrupted), per position.
    grads = {}
    handles = []
    for layer in layers:
        def grab(module, args, output, layer=layer):
            output.retain_grad()
            grads[layer] = output
        handles.append(layer.register_forward_hook(grab))
    run(model, corrupt, tgt)[-1, token].backward()
    for h in handles:
        h.remove()
    corrupt_kept = {}
    run(model, corrupt, tgt, capture=corrupt_kept)
    attribution = []
    for layer in layers:
        diff = (kept[layer] - corrupt_kept[layer])[:, 0, :]
        attribution.append((grads[layer].grad[:, 0, :] * diff).sum(-1).detach() / (clean_logit - corrupt_logit))
    heads = head_sweep(model, clean, corrupt, tgt, token, clean_logit, corrupt_logit)
    n_enc = cfg["n_enc"]
    tops, probs = [], []
    with torch.no_grad():
        for layer in model.transformer.decoder.layers:
            h = kept[layer]  # [T, 1, d]
            p = torch.softmax(model.generator(model.transformer.decoder.norm(h))[:, 0, :], dim=-1)
            top = p.max(dim=-1)
            tops.append(top.indices.float())
            probs.append(top.values)
    out = {"clean_ids": clean.float(), "corrupt_ids": corrupt.float(), "tgt_ids": tgt.float(),
           "token": torch.tensor([float(token)]), "clean_logit": torch.tensor([clean_logit]),
           "corrupt_logit": torch.tensor([corrupt_logit]),
           "effect.encoder": torch.tensor(effects[:n_enc], dtype=torch.float32),
           "effect.decoder": torch.tensor(effects[n_enc:], dtype=torch.float32),
           "lens.top": torch.stack(tops), "lens.p": torch.stack(probs).float(),
           "attribution.encoder": torch.stack(attribution[:n_enc]).float(),
           "attribution.decoder": torch.stack(attribution[n_enc:]).float(),
           "effect.heads": torch.tensor(heads, dtype=torch.float32)}
    os.makedirs(os.path.join(ROOT, "tests", "fixtures", "probe"), exist_ok=True)
    path = os.path.join(ROOT, "tests", "fixtures", "probe", "dates.safetensors")
    msf.write_safetensors(path, out, {"clean": CLEAN, "corrupt": CORRUPT, "target": TARGET})
    print("%s: logit %.4f clean, %.4f corrupted" % (os.path.relpath(path, ROOT), clean_logit, corrupt_logit))
    print("encoder effects", [[round(x, 3) for x in r] for r in effects[:n_enc]])
    print("decoder effects", [[round(x, 3) for x in r] for r in effects[n_enc:]])


if __name__ == "__main__":
    main()
