#!/usr/bin/env python3
"""wasm_madd.py: the page's two programs from one link of it, for the fused multiply-add.

  wasm_madd.py IN.wasm --madd OUT_MADD.wasm --plain OUT_PLAIN.wasm

The GEMM's kernels call __builtin_wasm_fma_f32x4 (src/tensor/simd.h: VMADD) when built with
-mrelaxed-simd. Debian 12's emscripten (clang 14) writes that call as the relaxed-SIMD
proposal's prototype instruction (0xfd 0xaf 0x01), which no browser runs; the standard
f32x4.relaxed_madd (0xfd 0x85 0x02, Chromium 114 and later) computes a * b + c of the same three
operands, fused where the CPU fuses. So from the one program this writes:

  --madd   every prototype instruction rewritten to f32x4.relaxed_madd (the same length);
  --plain  every one expanded to f32x4.mul then f32x4.add through a v128 local added to its
           function: the program for browsers without relaxed SIMD (the page asks which,
           src/web/index.html), and the same arithmetic as a build without -mrelaxed-simd.

Instructions are found by walking every function body, opcode by opcode with its immediates,
so a byte pattern inside a constant is never mistaken for one. Any other prototype relaxed
instruction, or an opcode this walker does not know, stops it with a message naming the
function and offset. Prints how many it rewrote; exits 1 on any error.
"""
import argparse
import sys

PROTO_FMA = 0xAF                           # f32x4.fma of the prototype (clang 14)
# What the prototype's relaxed instructions took (swizzle, truncations, fma and fms, laneselect,
# min and max): SIMD opcodes the standard leaves unused.
PROTO_RELAXED = {0xA2, 0xA5, 0xA6, 0xAF, 0xB0, 0xB2, 0xB3, 0xB4, 0xC5, 0xC6, 0xCF, 0xD0, 0xD2, 0xD3, 0xD4, 0xE2, 0xEE}
RELAXED_MADD = 0x105                       # f32x4.relaxed_madd, standard
F32X4_ADD, F32X4_MUL = 0xE4, 0xE6
V128 = 0x7B


class Bad(Exception):
    pass


def uleb(b, i):
    """(value, next index) of the unsigned LEB128 at b[i]."""
    v = shift = 0
    while True:
        if i >= len(b):
            raise Bad("a number runs past the end")
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, i
        if shift > 63:
            raise Bad("a number longer than 64 bits")


def skip_sleb(b, i):
    while True:
        if i >= len(b):
            raise Bad("a number runs past the end")
        i += 1
        if not b[i - 1] & 0x80:
            return i


def enc(v):
    out = bytearray()
    while True:
        x = v & 0x7F
        v >>= 7
        out.append(x | 0x80 if v else x)
        if not v:
            return bytes(out)


def memarg(b, i):
    return uleb(b, uleb(b, i)[1])[1]


def skip_simd(b, i, op):
    """The index past SIMD instruction op's immediates (b[i] is just past its opcode)."""
    if op <= 0x0B or op in (0x5C, 0x5D):        # loads and stores
        return memarg(b, i)
    if op in (0x0C, 0x0D):                      # v128.const, i8x16.shuffle
        return i + 16
    if 0x15 <= op <= 0x22:                      # extract_lane, replace_lane
        return i + 1
    if 0x54 <= op <= 0x5B:                      # load_lane, store_lane
        return memarg(b, i) + 1
    if op <= 0x113:
        return i
    raise Bad(f"SIMD opcode {op:#x} is unknown here")


def skip_misc(b, i, op):
    """The index past 0xFC instruction op's immediates."""
    if op <= 7:                                 # saturating truncations
        return i
    if op == 8:                                 # memory.init
        return uleb(b, i)[1] + 1
    if op in (9, 13, 15, 16, 17):               # data.drop, elem.drop, table.grow/size/fill
        return uleb(b, i)[1]
    if op == 10:                                # memory.copy
        return i + 2
    if op == 11:                                # memory.fill
        return i + 1
    if op in (12, 14):                          # table.init, table.copy
        return uleb(b, uleb(b, i)[1])[1]
    raise Bad(f"0xfc opcode {op} is unknown here")


BLOCK_TYPES = {0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F}
NO_IMMEDIATE = {0x00, 0x01, 0x05, 0x0B, 0x0F, 0x1A, 0x1B, 0xD1} | set(range(0x45, 0xC5))
ONE_INDEX = {0x0C, 0x0D, 0x10, 0x12, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0xD2}


def instructions(b, i, end):
    """Yields (start, prefix, op, next) for every instruction of the code b[i:end]."""
    while i < end:
        start, op = i, b[i]
        i += 1
        prefix = None
        if op in NO_IMMEDIATE:
            pass
        elif op in (0x02, 0x03, 0x04):          # block, loop, if: a block type
            i = i + 1 if b[i] in BLOCK_TYPES else skip_sleb(b, i)
        elif op in ONE_INDEX:
            i = uleb(b, i)[1]
        elif op == 0x0E:                        # br_table
            n, i = uleb(b, i)
            for _ in range(n + 1):
                i = uleb(b, i)[1]
        elif op in (0x11, 0x13):                # call_indirect, return_call_indirect
            i = uleb(b, uleb(b, i)[1])[1]
        elif op == 0x1C:                        # select with types
            n, i = uleb(b, i)
            i += n
        elif 0x28 <= op <= 0x3E:
            i = memarg(b, i)
        elif op in (0x3F, 0x40, 0xD0):          # memory.size, memory.grow, ref.null
            i += 1
        elif op in (0x41, 0x42):
            i = skip_sleb(b, i)
        elif op == 0x43:
            i += 4
        elif op == 0x44:
            i += 8
        elif op == 0xFC:
            prefix, (op, i) = 0xFC, uleb(b, i)
            i = skip_misc(b, i, op)
        elif op == 0xFD:
            prefix, (op, i) = 0xFD, uleb(b, i)
            i = skip_simd(b, i, op)
        elif op == 0xFE:                        # atomics: a memarg, or fence's one byte
            prefix, (op, i) = 0xFE, uleb(b, i)
            i = i + 1 if op == 0x03 else memarg(b, i)
        else:
            raise Bad(f"opcode {op:#x} is unknown here")
        if i > end:
            raise Bad("an instruction runs past its function's end")
        yield start, prefix, op, i


def sections(b):
    if b[:8] != b"\0asm\x01\0\0\0":
        raise Bad("not a WebAssembly module (version 1)")
    i, out = 8, []
    while i < len(b):
        sid = b[i]
        size, j = uleb(b, i + 1)
        if j + size > len(b):
            raise Bad(f"section {sid} runs past the end of the file")
        out.append((sid, i, j, j + size))
        i = j + size
    return out


def param_counts(b, secs):
    """The number of parameters of each function the code section defines, in its order."""
    types, funcs = [], []
    for sid, _, j, end in secs:
        if sid == 1:
            n, j = uleb(b, j)
            for _ in range(n):
                if b[j] != 0x60:
                    raise Bad("a type that is not a function type")
                p, j = uleb(b, j + 1)
                types.append(p)
                j += p
                r, j = uleb(b, j)
                j += r
        elif sid == 3:
            n, j = uleb(b, j)
            for _ in range(n):
                t, j = uleb(b, j)
                funcs.append(types[t])
    return funcs


def rewrite(b):
    """(madd, plain, count): the two programs and how many instructions were rewritten."""
    secs = sections(b)
    code = [s for s in secs if s[0] == 10]
    if len(code) != 1:
        raise Bad("no code section")
    _, s0, c0, c1 = code[0]
    params = param_counts(b, secs)
    madd, bodies, count = bytearray(b), [], 0
    n, i = uleb(b, c0)
    if n != len(params):
        raise Bad(f"{n} function bodies for {len(params)} functions")
    for f in range(n):
        size_at = i
        size, i = uleb(b, i)
        body_end = i + size
        groups, j = uleb(b, i)
        locals_ = 0
        for _ in range(groups):
            k, j = uleb(b, j)
            locals_ += k
            j += 1
        sites = []
        try:
            for start, prefix, op, _nxt in instructions(b, j, body_end):
                if prefix == 0xFD and op in PROTO_RELAXED:
                    if op != PROTO_FMA:
                        raise Bad(f"prototype relaxed SIMD opcode {op:#x}, which this does not rewrite")
                    sites.append(start)
        except Bad as e:
            raise Bad(f"function body {f} (file offset {j}): {e}") from None
        if not sites:
            bodies.append(b[size_at:body_end])
            i = body_end
            continue
        count += len(sites)
        for s in sites:  # the same three bytes' length: rewritten in place
            madd[s:s + 3] = b"\xfd" + enc(RELAXED_MADD)
        t = enc(params[f] + locals_)  # the new local, after every other
        body = bytearray(enc(groups + 1)) + b[uleb(b, i)[1]:j] + b"\x01" + bytes([V128])
        last = j
        for s in sites:  # [a b c] -> c to t, a * b, then + t
            body += b[last:s] + b"\x21" + t + b"\xfd" + enc(F32X4_MUL) + b"\x20" + t + b"\xfd" + enc(F32X4_ADD)
            last = s + 3
        body += b[last:body_end]
        bodies.append(enc(len(body)) + bytes(body))
        i = body_end
    content = enc(n) + b"".join(bodies)
    plain = b[:s0] + bytes([10]) + enc(len(content)) + content + b[c1:]
    return bytes(madd), plain, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("wasm")
    ap.add_argument("--madd", required=True)
    ap.add_argument("--plain", required=True)
    args = ap.parse_args()
    try:
        with open(args.wasm, "rb") as f:
            b = f.read()
        madd, plain, count = rewrite(b)
        if not count:
            raise Bad("no prototype f32x4.fma in it: was src/tensor built with -mrelaxed-simd?")
    except (OSError, Bad) as e:
        sys.exit(f"wasm_madd.py: {args.wasm}: {e}")
    for path, data in ((args.madd, madd), (args.plain, plain)):
        with open(path, "wb") as f:
            f.write(data)
    print(f"wasm_madd.py: {count} multiply-adds: {args.madd} (relaxed_madd), {args.plain} (mul, add)")


if __name__ == "__main__":
    main()
