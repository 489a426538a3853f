"""torch2st_layouts: the weight names of the PyTorch implementations the lessons run, for
scripts/torch2st.py: which lesson a checkpoint's names match, and the sizes its tensor shapes
make certain.

In a template, {a,b} and {0..3} stand for alternatives, {E} for an encoder layer index and
{D} for a decoder layer index (nanoGPT's blocks use {E}).
"""

import re


def listing(names, limit=5):
    """'a, b, c' with at most `limit` names, then '(and N more)'."""
    names = list(names)
    text = ", ".join(names[:limit])
    if len(names) > limit:
        text += f" (and {len(names) - limit} more)"
    return text


def expand(template):
    """All the names a template stands for, with {E} and {D} kept as they are."""
    m = re.search(r"\{([^{}]*(?:,|\.\.)[^{}]*)\}", template)
    if not m:
        return [template]
    inner = m.group(1)
    span = re.fullmatch(r"(\d+)\.\.(\d+)", inner)
    choices = ([str(i) for i in range(int(span.group(1)), int(span.group(2)) + 1)] if span
               else inner.split(","))
    out = []
    for c in choices:
        out.extend(expand(template[:m.start()] + c + template[m.end():]))
    return out


def name_regex(name):
    """A regex for one expanded name, with the layer indices {E} and {D} captured."""
    pat = re.escape(name).replace(re.escape("{E}"), r"(?P<E>\d+)")
    return re.compile(pat.replace(re.escape("{D}"), r"(?P<D>\d+)"))


class Layout:
    def __init__(self, lessons, title, templates, sizes, optional=(), flags=None,
                 layers=(("E", "num_encoder_layers"), ("D", "num_decoder_layers")), heads="nhead"):
        self.lessons = lessons  # the lesson files that read these names
        self.title = title
        self.required = [n for t in templates for n in expand(t)]
        self.optional = [n for t in optional for n in expand(t)]  # may be absent (no bias)
        self.names = self.required + self.optional
        self.nameset = set(self.names)
        self.layer_settings = layers  # (placeholder, the setting that counts its layers)
        self.heads = heads            # the setting of the head count, never inferred
        # setting -> the optional templates whose presence it says (1: all there, 0: none)
        self.flags = flags or {}
        # placeholder -> a regex for the start of a name up to and including its layer index
        self.layer_rx = {}
        for p in ("E", "D"):
            heads = {n[:n.index("{" + p + "}")] for n in self.names if "{" + p + "}" in n}
            if heads:
                alts = "|".join(re.escape(h) for h in sorted(heads, key=len, reverse=True))
                self.layer_rx[p] = re.compile(rf"(?:{alts})(\d+)(?=\.)")
        # setting -> [(template, ndim, dim)]: the tensor dimensions that give the setting
        self.sizes = sizes

    def placeholders(self):
        return list(self.layer_rx)

    def match(self, key):
        """(template, {placeholder: index}) for a key this layout names, else None."""
        if key in self.nameset:
            return key, {}
        for p, rx in self.layer_rx.items():
            m = rx.match(key)
            if m:
                template = key[:m.start(1)] + "{" + p + "}" + key[m.end(1):]
                if template in self.nameset:
                    return template, {p: int(m.group(1))}
        return None

    def layer_indices(self, keys):
        """Placeholder -> the set of layer indices the keys use."""
        found = {p: set() for p in self.placeholders()}
        for k in keys:
            m = self.match(k)
            if m:
                for p, i in m[1].items():
                    found[p].add(i)
        return found

    def expected(self, keys, names=None):
        """Every required name (or of `names`), for the layer counts the keys imply (at least 1)."""
        counts = {p: max(idx) + 1 if idx else 1 for p, idx in self.layer_indices(keys).items()}
        out = []
        for n in self.required if names is None else names:
            names = [n]
            for p, c in counts.items():
                if "{" + p + "}" in n:
                    names = [x.replace("{" + p + "}", str(i)) for i in range(c) for x in names]
            out.extend(names)
        return out


NN_TRANSFORMER = Layout(
    ("lessons/forward-pass.md", "lessons/pre-norm.md"),
    "PyTorch's nn.Transformer tutorial (Seq2SeqTransformer)",
    [
        "src_tok_emb.embedding.weight", "tgt_tok_emb.embedding.weight",
        "positional_encoding.pos_embedding",
        "transformer.encoder.layers.{E}.self_attn.{in_proj_weight,in_proj_bias}",
        "transformer.encoder.layers.{E}.self_attn.out_proj.{weight,bias}",
        "transformer.encoder.layers.{E}.{linear1,linear2,norm1,norm2}.{weight,bias}",
        "transformer.encoder.norm.{weight,bias}",
        "transformer.decoder.layers.{D}.{self_attn,multihead_attn}.{in_proj_weight,in_proj_bias}",
        "transformer.decoder.layers.{D}.{self_attn,multihead_attn}.out_proj.{weight,bias}",
        "transformer.decoder.layers.{D}.{linear1,linear2,norm1,norm2,norm3}.{weight,bias}",
        "transformer.decoder.norm.{weight,bias}",
        "generator.{weight,bias}",
    ],
    {
        "d_model": [("src_tok_emb.embedding.weight", 2, 1), ("tgt_tok_emb.embedding.weight", 2, 1),
                    ("positional_encoding.pos_embedding", 3, 2), ("generator.weight", 2, 1)],
        "src_vocab_size": [("src_tok_emb.embedding.weight", 2, 0)],
        "tgt_vocab_size": [("tgt_tok_emb.embedding.weight", 2, 0), ("generator.weight", 2, 0)],
        "dim_feedforward": [("transformer.encoder.layers.{E}.linear1.weight", 2, 0),
                            ("transformer.decoder.layers.{D}.linear1.weight", 2, 0)],
        "max_positions": [("positional_encoding.pos_embedding", 3, 0)],
    },
)

ANNOTATED = Layout(
    ("lessons/annotated-transformer.md",),
    "the Annotated Transformer",
    [
        "{src,tgt}_embed.0.lut.weight", "{src,tgt}_embed.1.pe",
        "encoder.layers.{E}.self_attn.linears.{0..3}.{weight,bias}",
        "encoder.layers.{E}.feed_forward.{w_1,w_2}.{weight,bias}",
        "encoder.layers.{E}.sublayer.{0,1}.norm.{a_2,b_2}",
        "encoder.norm.{a_2,b_2}",
        "decoder.layers.{D}.{self_attn,src_attn}.linears.{0..3}.{weight,bias}",
        "decoder.layers.{D}.feed_forward.{w_1,w_2}.{weight,bias}",
        "decoder.layers.{D}.sublayer.{0,1,2}.norm.{a_2,b_2}",
        "decoder.norm.{a_2,b_2}",
        "generator.proj.{weight,bias}",
    ],
    {
        "d_model": [("src_embed.0.lut.weight", 2, 1), ("tgt_embed.0.lut.weight", 2, 1),
                    ("src_embed.1.pe", 3, 2), ("tgt_embed.1.pe", 3, 2)],
        "src_vocab_size": [("src_embed.0.lut.weight", 2, 0)],
        "tgt_vocab_size": [("tgt_embed.0.lut.weight", 2, 0), ("generator.proj.weight", 2, 0)],
        "dim_feedforward": [("encoder.layers.{E}.feed_forward.w_1.weight", 2, 0),
                            ("decoder.layers.{D}.feed_forward.w_1.weight", 2, 0)],
        "max_positions": [("src_embed.1.pe", 3, 1), ("tgt_embed.1.pe", 3, 1)],
    },
)

ENCODER_FROM_SCRATCH = Layout(
    ("lessons/encoder-from-scratch.md",),
    "the encoder from scratch",
    [
        "embedding.weight",
        "layers.{E}.attention.{qkv_layer,linear_layer}.{weight,bias}",
        "layers.{E}.{norm1,norm2}.{gamma,beta}",
        "layers.{E}.ffn.{linear1,linear2}.{weight,bias}",
    ],
    {
        "d_model": [("embedding.weight", 2, 1), ("layers.{E}.attention.qkv_layer.weight", 2, 1)],
        "src_vocab_size": [("embedding.weight", 2, 0)],
        "dim_feedforward": [("layers.{E}.ffn.linear1.weight", 2, 0)],
    },
)

JADORE = Layout(
    ("lessons/attention-is-all-you-need-pytorch.md",),
    "attention-is-all-you-need-pytorch (jadore801120)",
    [
        "encoder.src_word_emb.weight", "encoder.position_enc.pos_table",
        "encoder.layer_norm.{weight,bias}",
        "encoder.layer_stack.{E}.slf_attn.{w_qs,w_ks,w_vs,fc}.weight",
        "encoder.layer_stack.{E}.slf_attn.layer_norm.{weight,bias}",
        "encoder.layer_stack.{E}.pos_ffn.{w_1,w_2,layer_norm}.{weight,bias}",
        "decoder.trg_word_emb.weight", "decoder.position_enc.pos_table",
        "decoder.layer_norm.{weight,bias}",
        "decoder.layer_stack.{D}.{slf_attn,enc_attn}.{w_qs,w_ks,w_vs,fc}.weight",
        "decoder.layer_stack.{D}.{slf_attn,enc_attn}.layer_norm.{weight,bias}",
        "decoder.layer_stack.{D}.pos_ffn.{w_1,w_2,layer_norm}.{weight,bias}",
        "trg_word_prj.weight",
    ],
    {
        "d_model": [("encoder.src_word_emb.weight", 2, 1), ("decoder.trg_word_emb.weight", 2, 1),
                    ("encoder.position_enc.pos_table", 3, 2),
                    ("decoder.position_enc.pos_table", 3, 2)],
        "src_vocab_size": [("encoder.src_word_emb.weight", 2, 0)],
        "tgt_vocab_size": [("decoder.trg_word_emb.weight", 2, 0), ("trg_word_prj.weight", 2, 0)],
        "dim_feedforward": [("encoder.layer_stack.{E}.pos_ffn.w_1.weight", 2, 0),
                            ("decoder.layer_stack.{D}.pos_ffn.w_1.weight", 2, 0)],
        "max_positions": [("encoder.position_enc.pos_table", 3, 1),
                          ("decoder.position_enc.pos_table", 3, 1)],
    },
)

BLOEM = Layout(
    ("lessons/transformers-from-scratch.md",),
    "Peter Bloem's transformer classifier",
    [
        "token_embedding.weight", "pos_embedding.weight",
        "tblocks.{E}.attention.{to_keys,to_queries,to_values}.weight",
        "tblocks.{E}.attention.unify_heads.{weight,bias}",
        "tblocks.{E}.{norm_1,norm_2}.{weight,bias}",
        "tblocks.{E}.ff.{0,2}.{weight,bias}",
        "toprobs.{weight,bias}",
    ],
    {
        "d_model": [("token_embedding.weight", 2, 1), ("pos_embedding.weight", 2, 1)],
        "src_vocab_size": [("token_embedding.weight", 2, 0)],
        "max_positions": [("pos_embedding.weight", 2, 0)],
        "dim_feedforward": [("tblocks.{E}.ff.0.weight", 2, 0)],
        "num_classes": [("toprobs.weight", 2, 0)],
    },
)

NANOGPT_BIASES = ("transformer.h.{E}.{ln_1,ln_2}.bias", "transformer.h.{E}.attn.{c_attn,c_proj}.bias",
                  "transformer.h.{E}.mlp.{c_fc,c_proj}.bias", "transformer.ln_f.bias")
NANOGPT = Layout(
    ("lessons/nanogpt.md",),
    "karpathy/nanoGPT's GPT (model.py)",
    [
        "transformer.{wte,wpe}.weight",
        "transformer.h.{E}.{ln_1,ln_2}.weight",
        "transformer.h.{E}.attn.{c_attn,c_proj}.weight",
        "transformer.h.{E}.mlp.{c_fc,c_proj}.weight",
        "transformer.ln_f.weight",
        "lm_head.weight",
    ],
    {
        "n_embd": [("transformer.wte.weight", 2, 1), ("transformer.wpe.weight", 2, 1)],
        "vocab_size": [("transformer.wte.weight", 2, 0), ("lm_head.weight", 2, 0)],
        "block_size": [("transformer.wpe.weight", 2, 0)],
    },
    # bias=False has no biases; the causal mask is a buffer (attn.bias) only where PyTorch has
    # no flash attention
    optional=NANOGPT_BIASES + ("transformer.h.{E}.attn.bias",),
    flags={"bias": NANOGPT_BIASES},
    layers=(("E", "n_layer"),),
    heads="n_head",
)

LAYOUTS = (NN_TRANSFORMER, ANNOTATED, ENCODER_FROM_SCRATCH, JADORE, BLOEM, NANOGPT)


def score(layout, keys):
    """(matched keys, expected-but-missing names, unexpected keys, similarity in [0, 1])."""
    keyset = set(keys)
    expected = layout.expected(keys)
    expset = set(expected)
    allowed = expset | set(layout.expected(keys, layout.optional))
    matched = [k for k in keys if k in allowed]
    missing = [n for n in expected if n not in keyset]
    unexpected = [k for k in keys if k not in allowed]
    union = len(keyset | expset)
    return matched, missing, unexpected, (len(matched) / union if union else 0.0)


def infer_sizes(layout, shapes):
    """Settings the tensor shapes make certain: {setting: value}; and notes on the doubtful."""
    found, notes = {}, []
    keys = list(shapes)
    indices = layout.layer_indices(keys)
    for p, setting in layout.layer_settings:
        idx = indices.get(p)
        if not idx:
            continue
        n = max(idx) + 1
        if idx == set(range(n)):
            found[setting] = n
        else:
            gaps = sorted(set(range(n)) - idx)
            notes.append(f"{setting} not inferred: layer indices {listing(map(str, gaps))} "
                         f"are missing")
    for setting, sources in layout.sizes.items():
        values = {}
        for template, ndim, dim in sources:
            rx = name_regex(template)
            for k in keys:
                if rx.fullmatch(k) and len(shapes[k]) == ndim:
                    values.setdefault(shapes[k][dim], []).append(k)
        if len(values) == 1:
            found[setting] = next(iter(values))
        elif len(values) > 1:
            said = "; ".join(f"{listing(ks, 2)} say {v}" for v, ks in values.items())
            notes.append(f"{setting} not inferred: the tensors disagree ({said})")
    for setting, templates in layout.flags.items():
        names = layout.expected(keys, [n for t in templates for n in expand(t)])
        have = [n for n in names if n in shapes]
        if len(have) in (0, len(names)):
            found[setting] = int(bool(have))
        else:
            notes.append(f"{setting} not inferred: {len(have)} of its {len(names)} tensors are "
                         f"there ({listing(n for n in names if n not in shapes)} missing)")
    return found, notes
