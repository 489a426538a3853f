#!/usr/bin/python3
"""torch2st: convert a PyTorch checkpoint into a .safetensors file that stepformer can load.

  /usr/bin/python3 scripts/torch2st.py CHECKPOINT.pt OUT.safetensors [--config "k=v k=v ..."]
                                       [--tokens-src JSON] [--tokens-tgt JSON]

The checkpoint may be a state_dict, a dict holding one (under state_dict, model,
model_state_dict or net), or a whole pickled nn.Module. Every floating-point tensor is written
as little-endian float32 under its own name; the safetensors format is written here directly.
A nanoGPT checkpoint's model_args (its GPTConfig) become the file's configuration.
See --help for the details, scripts/torch2st_layouts.py for the layouts it recognises, and
scripts/test_torch2st.sh for the tests.

Needs Debian's python3-torch and python3-numpy.
"""

import argparse
import contextlib
import json
import os
import re
import shlex
import struct
import sys
import tempfile

from torch2st_layouts import LAYOUTS, NN_TRANSFORMER, infer_sizes, listing, score

PROG = "torch2st"

# Where a dict commonly keeps the model's state_dict, in the order they are tried.
WRAP_KEYS = ("state_dict", "model", "model_state_dict", "net")
# Where a dict commonly keeps the training configuration (never read; only mentioned).
CONFIG_KEYS = ("config", "args", "opt")
# Prefixes that wrappers add to every key.
PREFIXES = (
    ("module.", "DataParallel / DistributedDataParallel"),
    ("_orig_mod.", "torch.compile"),
    ("model.", "a wrapping module"),
)
# stepformer's settings that are whole numbers, and those with a fixed set of values.
INT_SETTINGS = {
    "d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward",
    "src_vocab_size", "tgt_vocab_size", "max_positions", "bos_id", "eos_id", "pad_id", "unk_id",
    "num_classes", "d_k", "d_v",
    "n_layer", "n_head", "n_embd", "block_size", "vocab_size",  # nanoGPT's names
}
CHOICE_SETTINGS = {
    "norm_first": ("true", "false"),
    "activation": ("relu", "gelu"),
    "layer_norm": ("torch", "annotated"),
    "bias": ("0", "1"),  # nanoGPT: biases in every linear and LayerNorm, or none
}
# nanoGPT's checkpoint (train.py's ckpt.pt) keeps its GPTConfig under 'model_args'; these
# entries of it are the configuration lessons/nanogpt.md reads (dropout is not: evaluation).
MODEL_ARGS = ("n_layer", "n_head", "n_embd", "block_size", "vocab_size", "bias")
MAX_DIMS = 4  # stepformer's limit on a tensor's dimensions


class Failure(Exception):
    """A problem to report as one line on stderr, then exit 1."""


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)


def count(n, word):
    """'1 tensor', '3 tensors', '2 entries'."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


# ----------------------------------------------------------------------------------------------
# Command line and settings


def parse_config(texts):
    """--config texts -> {key: value} in order; a malformed item raises Failure naming it."""
    out = {}
    for text in texts:
        for item in re.split(r"[\s,]+", text.strip()):
            if not item:
                continue
            key, eq, val = item.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not val:
                raise Failure(f"--config: item '{item}' should be key=value")
            if key in INT_SETTINGS and not re.fullmatch(r"-?\d+", val):
                raise Failure(f"--config: item '{item}': {key} is a whole number")
            if key in CHOICE_SETTINGS and val not in CHOICE_SETTINGS[key]:
                raise Failure(f"--config: item '{item}': {key} is "
                              f"{' or '.join(CHOICE_SETTINGS[key])}")
            if key in ("src_tokens", "tgt_tokens"):
                raise Failure(f"--config: item '{item}': give the vocabulary with "
                              f"--tokens-{key[:3]} instead")
            if key in out and out[key] != val:
                raise Failure(f"--config: {key} is given twice ({out[key]} and {val})")
            out[key] = val
    return out


def read_tokens(arg, flag):
    """A vocabulary from a JSON array (or {token: id} object), inline or in a file."""
    text = arg
    if not arg.lstrip().startswith(("[", "{")):
        try:
            with open(arg, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise Failure(f"{arg}: cannot read the {flag} vocabulary: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise Failure(f"{arg}: the {flag} vocabulary is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Failure(f"{flag}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                      f"column {exc.colno})") from None
    if isinstance(data, dict):  # token -> id, as torchtext's get_stoi() gives
        ids = sorted(data.values()) if all(type(v) is int for v in data.values()) else None
        if ids != list(range(len(data))):
            raise Failure(f"{flag}: a JSON object must map each token to its id, 0 to "
                          f"{len(data) - 1}, each id once")
        data = sorted(data, key=data.get)
    if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
        raise Failure(f"{flag}: expected a JSON array of token strings")
    if not data:
        raise Failure(f"{flag}: the vocabulary is empty")
    twice = sorted({t for t in data if data.count(t) > 1}) if len(set(data)) != len(data) else []
    if twice:
        say(f"warning: {flag} holds these tokens more than once: {listing(map(repr, twice))}")
    return data


def make_parser():
    lessons = "\n".join(f"  {' or '.join(l.lessons)}\n      {l.title}" for l in LAYOUTS)
    p = argparse.ArgumentParser(
        prog="torch2st.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Convert a PyTorch checkpoint into a .safetensors file that stepformer loads.\n\n"
            "CHECKPOINT is read with torch.load: a state_dict, a dict holding one under\n"
            "state_dict, model, model_state_dict or net, or a whole pickled nn.Module. Every\n"
            "floating-point tensor is written as float32 under its name, in name order\n"
            "(tensors that share storage as separate copies); integer and other entries are\n"
            "skipped with a note. A 'module.', 'model.' or '_orig_mod.' prefix on every key\n"
            "is stripped.\n\n"
            "__metadata__ holds the --config items, then the items of a nanoGPT checkpoint's\n"
            "model_args (n_layer, n_head, n_embd, block_size, vocab_size, bias as 0 or 1),\n"
            "then the sizes that the tensor shapes make certain for the recognised layout\n"
            "(d_model, vocabulary sizes, layer counts, dim_feedforward, max_positions; nanoGPT's\n"
            "n_layer, n_embd, vocab_size, block_size, bias) where those do not give them. The\n"
            "head count (nhead, n_head) is never guessed, and a checkpoint's own config/args/opt\n"
            "entry is never read.\n\n"
            "The converter says on stderr which lesson's weight names the checkpoint matches."),
        epilog=("known layouts:\n" + lessons + "\n\n"
                "Exit status: 0 written, 1 failure (one line on stderr naming the file),\n"
                "2 bad usage.\n\n"
                "example:\n  scripts/torch2st.py model.pt model.safetensors \\\n"
                "      --config \"nhead=8 norm_first=false\" --tokens-src src_vocab.json"))
    p.add_argument("checkpoint", metavar="CHECKPOINT.pt", help="the PyTorch checkpoint to read")
    p.add_argument("out", metavar="OUT.safetensors", help="the file to write")
    p.add_argument("--config", action="append", default=[], metavar='"k=v k=v ..."',
                   help="settings for __metadata__, separated by spaces or commas "
                        "(for example nhead=8 norm_first=true bos_id=2); may be repeated")
    p.add_argument("--tokens-src", metavar="JSON",
                   help="source vocabulary, written as src_tokens: a JSON array of token strings "
                        "(or a {token: id} object), inline or in a file")
    p.add_argument("--tokens-tgt", metavar="JSON", help="target vocabulary, likewise (tgt_tokens)")
    p.add_argument("--import-path", action="append", default=[], metavar="DIR",
                   help="a directory to import from when the checkpoint pickles a whole model "
                        "whose class lives there")
    p.add_argument("--trust-pickle", action="store_true",
                   help="load with weights_only=False (for a whole pickled model on a torch "
                        "that refuses those by default; only for files you trust)")
    return p


# ----------------------------------------------------------------------------------------------
# Reading the checkpoint


def load_checkpoint(torch, path, trust_pickle):
    if os.path.isdir(path):
        raise Failure(f"{path}: is a directory, not a checkpoint")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise Failure(f"{path}: cannot read: {exc.strerror}") from None
    kwargs = {"weights_only": False} if trust_pickle else {}
    try:
        return torch.load(path, map_location="cpu", **kwargs)
    except (AttributeError, ImportError) as exc:
        if not isinstance(exc, ImportError) and "Can't get attribute" not in str(exc):
            raise Failure(f"{path}: cannot load as a PyTorch checkpoint: "
                          f"{type(exc).__name__}: {first_line(exc)}") from None
        m = re.search(r"Can't get attribute '([^']+)' on <module '([^']+)'", str(exc))
        what = f"class {m.group(1)} of module {m.group(2)}" if m else first_line(exc)
        raise Failure(f"{path}: it pickles a whole model whose code cannot be imported here "
                      f"({what}); save model.state_dict() instead, or pass --import-path DIR "
                      f"of the model's code") from None
    except Exception as exc:  # torch raises many kinds on a file that is not a checkpoint
        hint = ("; if you trust the file, add --trust-pickle" if "weights_only" in str(exc)
                else "")
        raise Failure(f"{path}: cannot load as a PyTorch checkpoint: {type(exc).__name__}: "
                      f"{first_line(exc)}{hint}") from None


def first_line(exc):
    lines = [l.strip() for l in str(exc).splitlines() if l.strip()]
    return lines[0] if lines else "no details"


def describe(obj):
    if isinstance(obj, dict):
        keys = list(obj)
        return f"a dict with keys {listing(map(repr, keys), 6)}" if keys else "an empty dict"
    return f"a {type(obj).__module__}.{type(obj).__qualname__}".replace("a builtins.", "a ")


def find_state_dict(torch, obj, path):
    """(state_dict, how it was found) from what torch.load returned."""
    how = []
    for _ in range(3):  # a state_dict may be wrapped at most twice
        if isinstance(obj, torch.nn.Module):
            how.append(f"of a whole pickled {type(obj).__name__}")
            return obj.state_dict(), how
        if not isinstance(obj, dict):
            break
        wrap = [k for k in WRAP_KEYS if isinstance(obj.get(k), (dict, torch.nn.Module))]
        if not wrap:
            if not obj or any(isinstance(v, torch.Tensor) for v in obj.values()):
                return obj, how
            break
        unread = [k for k in CONFIG_KEYS if k in obj]
        if unread and "model_args" not in obj:
            say(f"note: the checkpoint's {listing(map(repr, unread))} entry is not read; give "
                f"the settings stepformer needs with --config")
        how.append(f"from the {wrap[0]!r} entry")
        obj = obj[wrap[0]]
    raise Failure(f"{path}: found {describe(obj)}, not a state_dict, a dict holding one under "
                  f"{'/'.join(WRAP_KEYS)}, or an nn.Module")


def read_model_args(obj, path):
    """nanoGPT's configuration from a checkpoint's 'model_args' entry: {setting: text}."""
    args = obj.get("model_args") if isinstance(obj, dict) else None
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise Failure(f"{path}: 'model_args' is {describe(args)}, not a dict of nanoGPT's settings")
    out = {}
    for key in MODEL_ARGS:
        if key not in args:
            continue
        v = args[key]
        if key == "bias" and isinstance(v, bool):
            out[key] = "1" if v else "0"
        elif isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            out[key] = str(v)
        else:
            raise Failure(f"{path}: model_args['{key}'] is {v!r}, not a whole number"
                          f"{' or a bool' if key == 'bias' else ''}")
    say("note: read the checkpoint's model_args: " + " ".join(f"{k}={v}" for k, v in out.items()))
    return out


def merge_config(config, model_args):
    """--config over the checkpoint's model_args; {setting: value}, {setting: where from}."""
    merged = dict(model_args)
    origin = {k: "the checkpoint's model_args" for k in model_args}
    for k, v in config.items():
        if k in model_args and model_args[k] != v:
            say(f"warning: --config says {k}={v}, but the checkpoint's model_args say "
                f"{model_args[k]}; written as given")
        merged[k] = v
        origin[k] = "--config"
    return merged, origin


def strip_prefixes(keys):
    """(new key for each key, notes on what was stripped)."""
    notes = []
    renamed = list(keys)
    while renamed:
        for prefix, why in PREFIXES:
            if all(k.startswith(prefix) and len(k) > len(prefix) for k in renamed):
                renamed = [k[len(prefix):] for k in renamed]
                notes.append(f"every key starts with '{prefix}' ({why}): stripped")
                break
        else:
            break
    return renamed, notes


def select_tensors(torch, sd, path):
    """{name: tensor} of the floating-point tensors, with notes on everything skipped."""
    if not sd:
        raise Failure(f"{path}: the state_dict is empty")
    names = [k for k in sd if isinstance(k, str)]
    if len(names) != len(sd):
        say(f"note: skipped {count(len(sd) - len(names), 'entry')} (keys that are not strings): "
            f"{listing(repr(k) for k in sd if not isinstance(k, str))}")
    stripped, notes = strip_prefixes(names)
    for n in notes:
        say("note: " + n)
    out, non_tensor, non_float, converted = {}, [], [], {}
    for key, name in zip(names, stripped):
        v = sd[key]
        if not isinstance(v, torch.Tensor):
            non_tensor.append(f"{name} ({type(v).__name__})")
        elif v.is_complex() or not v.is_floating_point():
            non_float.append(f"{name} ({str(v.dtype).replace('torch.', '')})")
        elif v.is_meta:
            non_float.append(f"{name} (a meta tensor, without data)")
        elif name == "__metadata__":
            non_tensor.append(f"{name} (a tensor may not take the name of the metadata)")
        else:
            if v.dtype != torch.float32:
                dt = str(v.dtype).replace("torch.", "")
                converted[dt] = converted.get(dt, 0) + 1
            out[name] = v
    if non_tensor:
        say(f"note: skipped {count(len(non_tensor), 'entry')} (not tensors): "
            f"{listing(non_tensor)}")
    if non_float:
        say(f"note: skipped {count(len(non_float), 'tensor')} (not floating point): "
            f"{listing(non_float)}")
    if converted:
        say("note: converted to float32: " +
            ", ".join(count(n, f"{dt} tensor") for dt, n in sorted(converted.items())))
    if not out:
        raise Failure(f"{path}: none of the state_dict's {len(sd)} entries is a floating-point "
                      f"tensor")
    return out


def note_shared(tensors):
    """Says which tensors share storage (each is still written as its own copy)."""
    groups = {}
    for name, t in tensors.items():
        try:
            storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            ptr = storage.data_ptr()
        except Exception:  # sparse and other storage-less tensors share nothing
            continue
        if ptr:
            groups.setdefault(ptr, []).append(name)
    for names in groups.values():
        if len(names) > 1:
            say(f"note: {listing(sorted(names))} share storage (tied weights); each is written "
                f"as its own copy")


# ----------------------------------------------------------------------------------------------
# Writing


def check_writable(out, checkpoint):
    if os.path.isdir(out):
        raise Failure(f"{out}: is a directory")
    if os.path.exists(out) and os.path.exists(checkpoint) and os.path.samefile(out, checkpoint):
        raise Failure(f"{out}: is the checkpoint itself; write to another file")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise Failure(f"{out}: cannot write: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(out) and not os.access(out, os.W_OK)):
        raise Failure(f"{out}: cannot write: permission denied")


def write_safetensors(torch, out, tensors, metadata):
    """Writes the file through a temporary file in the same folder; returns its size."""
    import numpy as np

    header = {"__metadata__": metadata}
    order = sorted(tensors)
    offset = 0
    for name in order:
        t = tensors[name]
        nbytes = 4 * t.numel()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    folder = os.path.dirname(os.path.abspath(out))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".torch2st-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise Failure(f"{out}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for name in order:
                t = tensors[name].detach()
                if t.is_sparse:
                    t = t.to_dense()
                a = t.to(device="cpu", dtype=torch.float32).contiguous().numpy()
                f.write(np.ascontiguousarray(a, dtype="<f4"))  # its bytes, without a copy
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, out)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise Failure(f"{out}: cannot write: {exc.strerror}") from None
        raise
    return 8 + len(text) + offset


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ----------------------------------------------------------------------------------------------
# Reporting the layout


def report_layout(shapes, config, out):
    """Prints which lesson's names fit best; returns that Layout, or None when none fits."""
    keys = list(shapes)
    results = [(layout, score(layout, keys)) for layout in LAYOUTS]
    layout, (matched, missing, unexpected, sim) = max(results, key=lambda r: r[1][3])
    if sim <= 0.5:
        say(f"no known layout matches over half of the tensors (nearest: {layout.lessons[0]}, "
            f"{len(matched)} of {len(keys)} tensors, {len(missing)} of its names missing); the "
            f"file is written, but no lesson reads these names as they are")
        return None
    lessons = layout.lessons
    if layout is NN_TRANSFORMER:
        nf = config.get("norm_first")
        lessons = {"false": lessons[:1], "true": lessons[1:]}.get(nf, lessons)
    run = (f"build/stepformer run --program {lessons[0]} --model {shlex.quote(out)}" +
           ("" if layout.heads in config else f' --config "{layout.heads}=N"'))
    say(f"matches {' or '.join(lessons)}: {len(matched)} of {len(keys)} tensors (run: {run})")
    if len(lessons) > 1:
        say("both standard lessons fit: the weights do not say whether the model is post-norm "
            f"({lessons[0]}) or pre-norm ({lessons[1]}); record it with --config "
            "norm_first=false or norm_first=true")
    if missing:
        say(f"  {len(missing)} expected but missing: {listing(missing)}")
    if unexpected:
        say(f"  {len(unexpected)} unexpected: {listing(unexpected)}")
    return layout


def build_metadata(layout, shapes, config, origin, vocab):
    """--config and model_args, then the sizes the shapes make certain, then the vocabularies."""
    metadata = dict(config)
    if layout is not None:
        sizes, notes = infer_sizes(layout, shapes)
        for n in notes:
            say("note: " + n)
        for k, v in sizes.items():
            if k in config and config[k] != str(v):
                say(f"warning: {origin[k]} says {k}={config[k]}, but the tensor shapes say {v}; "
                    f"written as given")
        inferred = {k: str(v) for k, v in sizes.items() if k not in config}
        metadata.update(inferred)
        if inferred:
            say("inferred from the tensor shapes: " +
                " ".join(f"{k}={v}" for k, v in inferred.items()))
        if layout.heads not in config:
            say(f"note: {layout.heads} is not inferred (the shapes cannot tell it); give it with "
                f"--config {layout.heads}=N")
    for side, tokens in vocab.items():
        size = metadata.get(f"{side}_vocab_size")
        if size is not None and int(size) != len(tokens):
            raise Failure(f"--tokens-{side}: {count(len(tokens), 'token')}, but "
                          f"{side}_vocab_size is {size}")
        metadata[f"{side}_tokens"] = json.dumps(tokens, ensure_ascii=False)
    return metadata


def main(argv):
    args = make_parser().parse_args(argv)
    try:
        config = parse_config(args.config)
        vocab = {}
        if args.tokens_src is not None:
            vocab["src"] = read_tokens(args.tokens_src, "--tokens-src")
        if args.tokens_tgt is not None:
            vocab["tgt"] = read_tokens(args.tokens_tgt, "--tokens-tgt")
        check_writable(args.out, args.checkpoint)
        try:
            import torch
        except ImportError as exc:
            raise Failure(f"cannot import torch ({exc}); install python3-torch") from None
        sys.path[:0] = args.import_path
        obj = load_checkpoint(torch, args.checkpoint, args.trust_pickle)
        config, origin = merge_config(config, read_model_args(obj, args.checkpoint))
        sd, how = find_state_dict(torch, obj, args.checkpoint)
        if how:
            say(f"note: took the state_dict {', '.join(how)}")
        tensors = select_tensors(torch, sd, args.checkpoint)
        note_shared(tensors)
        shapes = {k: tuple(t.shape) for k, t in tensors.items()}
        for name, shape in shapes.items():
            if len(shape) > MAX_DIMS:
                say(f"warning: tensor '{name}' has {len(shape)} dimensions {list(shape)}; it is "
                    f"written, but stepformer reads at most {MAX_DIMS}")

        layout = report_layout(shapes, config, args.out)
        metadata = build_metadata(layout, shapes, config, origin, vocab)
        size = write_safetensors(torch, args.out, tensors, metadata)
        say(f"wrote {args.out}: {count(len(tensors), 'tensor')}, {size} bytes, "
            f"{count(len(metadata), 'metadata entry')}")
        return 0
    except Failure as exc:
        say(str(exc))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
