// wasm_madd.js: the page's program with its GEMM's multiply-adds as the browser can run them.
//
// The GEMM's kernels call __builtin_wasm_fma_f32x4 (src/tensor/simd.h: VMADD), built with
// -mrelaxed-simd. Debian 12's emscripten (clang 14) writes that call as the relaxed-SIMD
// proposal's prototype instruction (0xfd 0xaf 0x01), which no browser runs. The standard
// f32x4.relaxed_madd (0xfd 0x85 0x02; Chromium 114 and later) computes a * b + c of the same
// three operands, fused where the CPU fuses. Two rewrites of one program:
//
//   madd(bytes)   every prototype instruction becomes relaxed_madd (the same length): the
//                 program the site carries (the build runs this once, under node);
//   plain(bytes)  every relaxed_madd (or prototype) becomes f32x4.mul then f32x4.add through a
//                 v128 local added to its function: the page's loader (index.html) makes this
//                 in the browser where relaxed SIMD is missing (hasRelaxedMadd() says), and the
//                 tests run it under node.
//
// Instructions are found by walking every function body, opcode by opcode with its immediates,
// so a byte pattern inside a constant is never mistaken for one. Another relaxed instruction, or
// an opcode the walker does not know, throws an Error naming the function and offset.
//
// Under node:  node wasm_madd.js IN.wasm --madd OUT.wasm [--plain OUT_PLAIN.wasm]
'use strict';
(function (root) {
  const PROTO_FMA = 0xaf;        // f32x4.fma of the prototype (clang 14)
  const RELAXED_MADD = 0x105;    // f32x4.relaxed_madd, standard
  const F32X4_ADD = 0xe4, F32X4_MUL = 0xe6, V128 = 0x7b;
  // What the prototype's other relaxed instructions took (swizzle, truncations, fms, laneselect,
  // min and max), opcodes the standard leaves unused, and the standard's relaxed range but madd.
  const OTHER_RELAXED = new Set([0xa2, 0xa5, 0xa6, 0xb0, 0xb2, 0xb3, 0xb4, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3,
                                 0xd4, 0xe2, 0xee]);
  const isMadd = (op) => op === PROTO_FMA || op === RELAXED_MADD;
  const isOtherRelaxed = (op) => OTHER_RELAXED.has(op) || (op >= 0x100 && op <= 0x113 && op !== RELAXED_MADD);

  function fail(what) { throw new Error(what); }

  // [value, next index] of the unsigned LEB128 at b[i].
  function uleb(b, i) {
    let v = 0, mul = 1;
    for (let n = 0; n < 10; n++) {
      if (i >= b.length) fail('a number runs past the end');
      const x = b[i++];
      v += (x & 0x7f) * mul;
      mul *= 128;
      if (!(x & 0x80)) return [v, i];
    }
    fail('a number longer than 64 bits');
  }
  function skipSleb(b, i) {
    for (let n = 0; n < 10; n++) {
      if (i >= b.length) fail('a number runs past the end');
      if (!(b[i++] & 0x80)) return i;
    }
    fail('a number longer than 64 bits');
  }
  function enc(v) {
    const out = [];
    do {
      const x = v % 128;
      v = Math.floor(v / 128);
      out.push(v ? x | 0x80 : x);
    } while (v);
    return out;
  }
  const memarg = (b, i) => uleb(b, uleb(b, i)[1])[1];
  function append(to, from) {  // (a loop: spreading a large array would overflow the stack)
    for (let k = 0; k < from.length; k++) to.push(from[k]);
  }

  // The index past SIMD instruction op's immediates (b[i] is just past its opcode).
  function skipSimd(b, i, op) {
    if (op <= 0x0b || op === 0x5c || op === 0x5d) return memarg(b, i);   // loads and stores
    if (op === 0x0c || op === 0x0d) return i + 16;                      // v128.const, i8x16.shuffle
    if (op >= 0x15 && op <= 0x22) return i + 1;                         // extract and replace lane
    if (op >= 0x54 && op <= 0x5b) return memarg(b, i) + 1;              // load and store lane
    if (op <= 0x113) return i;
    fail('SIMD opcode 0x' + op.toString(16) + ' is unknown here');
  }
  // The index past 0xfc instruction op's immediates.
  function skipMisc(b, i, op) {
    if (op <= 7) return i;                                               // saturating truncations
    if (op === 8) return uleb(b, i)[1] + 1;                              // memory.init
    if ([9, 13, 15, 16, 17].includes(op)) return uleb(b, i)[1];          // data.drop, elem.drop, table.*
    if (op === 10) return i + 2;                                         // memory.copy
    if (op === 11) return i + 1;                                         // memory.fill
    if (op === 12 || op === 14) return uleb(b, uleb(b, i)[1])[1];        // table.init, table.copy
    fail('0xfc opcode ' + op + ' is unknown here');
  }

  const BLOCK_TYPES = new Set([0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);
  const ONE_INDEX = new Set([0x0c, 0x0d, 0x10, 0x12, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0xd2]);
  const noImmediate = (op) => [0x00, 0x01, 0x05, 0x0b, 0x0f, 0x1a, 0x1b, 0xd1].includes(op) || (op >= 0x45 && op <= 0xc4);

  // Calls visit(start, op, next) for every SIMD instruction of the code b[i:end].
  function walkSimd(b, i, end, visit) {
    while (i < end) {
      const start = i;
      let op = b[i++];
      if (noImmediate(op)) {
      } else if (op >= 0x02 && op <= 0x04) {                             // block, loop, if
        i = BLOCK_TYPES.has(b[i]) ? i + 1 : skipSleb(b, i);
      } else if (ONE_INDEX.has(op)) {
        i = uleb(b, i)[1];
      } else if (op === 0x0e) {                                          // br_table
        let n;
        [n, i] = uleb(b, i);
        for (let k = 0; k <= n; k++) i = uleb(b, i)[1];
      } else if (op === 0x11 || op === 0x13) {                           // call_indirect and its tail call
        i = uleb(b, uleb(b, i)[1])[1];
      } else if (op === 0x1c) {                                          // select with types
        let n;
        [n, i] = uleb(b, i);
        i += n;
      } else if (op >= 0x28 && op <= 0x3e) {
        i = memarg(b, i);
      } else if (op === 0x3f || op === 0x40 || op === 0xd0) {            // memory.size, memory.grow, ref.null
        i += 1;
      } else if (op === 0x41 || op === 0x42) {
        i = skipSleb(b, i);
      } else if (op === 0x43) {
        i += 4;
      } else if (op === 0x44) {
        i += 8;
      } else if (op === 0xfc) {
        [op, i] = uleb(b, i);
        i = skipMisc(b, i, op);
      } else if (op === 0xfd) {
        [op, i] = uleb(b, i);
        i = skipSimd(b, i, op);
        visit(start, op, i);
      } else if (op === 0xfe) {                                          // atomics
        [op, i] = uleb(b, i);
        i = op === 0x03 ? i + 1 : memarg(b, i);
      } else {
        fail('opcode 0x' + op.toString(16) + ' is unknown here');
      }
      if (i > end) fail("an instruction runs past its function's end");
    }
  }

  function sections(b) {
    const magic = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
    if (b.length < 8 || magic.some((x, k) => b[k] !== x)) fail('not a WebAssembly module (version 1)');
    const out = [];
    let i = 8;
    while (i < b.length) {
      const id = b[i];
      const [size, j] = uleb(b, i + 1);
      if (j + size > b.length) fail('section ' + id + ' runs past the end of the file');
      out.push({ id, start: i, content: j, end: j + size });
      i = j + size;
    }
    return out;
  }

  // The number of parameters of each function the code section defines, in its order.
  function paramCounts(b, secs) {
    const types = [], funcs = [];
    for (const s of secs) {
      let j = s.content, n;
      if (s.id === 1) {
        [n, j] = uleb(b, j);
        for (let k = 0; k < n; k++) {
          if (b[j] !== 0x60) fail('a type that is not a function type');
          let p, r;
          [p, j] = uleb(b, j + 1);
          types.push(p);
          [r, j] = uleb(b, j + p);
          j += r;
        }
      } else if (s.id === 3) {
        [n, j] = uleb(b, j);
        for (let k = 0; k < n; k++) {
          let t;
          [t, j] = uleb(b, j);
          funcs.push(types[t]);
        }
      }
    }
    return funcs;
  }

  // Each function body of the code section: {sizeAt, locals (start of its locals), code, end,
  // groups, count (its parameters and locals: the index a new local takes), sites (offsets of
  // its multiply-adds)}.
  function bodies(b) {
    const secs = sections(b), code = secs.filter((s) => s.id === 10);
    if (code.length !== 1) fail('no code section');
    const params = paramCounts(b, secs);
    let [n, i] = uleb(b, code[0].content);
    if (n !== params.length) fail(n + ' function bodies for ' + params.length + ' functions');
    const out = [];
    for (let f = 0; f < n; f++) {
      const sizeAt = i;
      let size, groups, j;
      [size, i] = uleb(b, i);
      const end = i + size;
      [groups, j] = uleb(b, i);
      let count = 0;
      for (let g = 0; g < groups; g++) {
        let k;
        [k, j] = uleb(b, j);
        count += k;
        j += 1;
      }
      const sites = [];
      try {
        walkSimd(b, j, end, (start, op) => {
          if (isOtherRelaxed(op)) fail('relaxed SIMD opcode 0x' + op.toString(16) + ', which this does not rewrite');
          if (isMadd(op)) sites.push(start);
        });
      } catch (e) {
        fail('function body ' + f + ' (file offset ' + j + '): ' + e.message);
      }
      out.push({ sizeAt, locals: i, code: j, end, groups, count: params[f] + count, sites });
      i = end;
    }
    return { code: code[0], bodies: out };
  }

  // The program with every multiply-add as the standard relaxed_madd, and how many there are.
  function madd(bytes) {
    const b = new Uint8Array(bytes), out = b.slice();
    let count = 0;
    for (const f of bodies(b).bodies)
      for (const s of f.sites) {  // 0xfd and a two-byte opcode, either way
        if (uleb(b, s + 1)[1] !== s + 3) fail('a multiply-add whose opcode is not two bytes long, at ' + s);
        out.set([0xfd].concat(enc(RELAXED_MADD)), s);
        count++;
      }
    return { bytes: out, count };
  }

  // The program with every multiply-add as a multiply then an add, and how many there were.
  function plain(bytes) {
    const b = new Uint8Array(bytes), { code, bodies: fs } = bodies(b), parts = [];
    let count = 0;
    for (const f of fs) {
      if (!f.sites.length) {
        parts.push(b.subarray(f.sizeAt, f.end));
        continue;
      }
      const t = enc(f.count);  // the new local, after every other: [a b c] -> c to t, a * b, + t
      const body = enc(f.groups + 1);
      append(body, b.subarray(uleb(b, f.locals)[1], f.code));
      body.push(1, V128);
      let last = f.code;
      for (const s of f.sites) {
        append(body, b.subarray(last, s));
        append(body, [0x21].concat(t, 0xfd, enc(F32X4_MUL), 0x20, t, 0xfd, enc(F32X4_ADD)));
        last = uleb(b, s + 1)[1];
      }
      append(body, b.subarray(last, f.end));
      parts.push(Uint8Array.from(enc(body.length).concat(body)));
      count += f.sites.length;
    }
    const head = enc(fs.length);
    const size = head.length + parts.reduce((n, p) => n + p.length, 0);
    const section = [10].concat(enc(size), head);  // its id, its size, then the count of bodies
    const out = new Uint8Array(code.start + section.length + (size - head.length) + (b.length - code.end));
    out.set(b.subarray(0, code.start), 0);
    let at = code.start;
    out.set(section, at);
    at += section.length;
    for (const p of parts) out.set(p, at), at += p.length;
    out.set(b.subarray(code.end), at);
    return { bytes: out, count };
  }

  // Whether this engine runs relaxed_madd: a module of that one instruction validates only where
  // it does (the page's loader asks this before it compiles the program).
  const PROBE = [0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, V128, V128, V128, 1, V128, 3, 2, 1, 0,
                 10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd].concat(enc(RELAXED_MADD), [0x0b]);
  function hasRelaxedMadd() {
    return typeof WebAssembly === 'object' && WebAssembly.validate(Uint8Array.from(PROBE));
  }

  const api = { madd, plain, hasRelaxedMadd };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.wasmMadd = api;

  if (typeof require === 'function' && typeof module === 'object' && require.main === module) {
    const fs = require('fs'), args = process.argv.slice(2);
    const flag = (name) => { const k = args.indexOf(name); return k >= 0 ? args[k + 1] : null; };
    const input = args[0], maddOut = flag('--madd'), plainOut = flag('--plain');
    if (!input || !maddOut) {
      console.error('usage: node wasm_madd.js IN.wasm --madd OUT.wasm [--plain OUT_PLAIN.wasm]');
      process.exit(2);
    }
    try {
      const b = fs.readFileSync(input), m = madd(b);
      if (!m.count) fail('no prototype f32x4.fma in it: was src/tensor built with -mrelaxed-simd?');
      const p = plainOut ? plain(m.bytes) : null;
      fs.writeFileSync(maddOut, m.bytes);
      if (p) fs.writeFileSync(plainOut, p.bytes);
      console.log('wasm_madd.js: ' + m.count + ' multiply-adds: ' + maddOut + ' (relaxed_madd)' +
                  (p ? ', ' + plainOut + ' (mul, add)' : ''));
    } catch (e) {
      console.error('wasm_madd.js: ' + input + ': ' + e.message);
      process.exit(1);
    }
  }
})(typeof self === 'object' ? self : this);
