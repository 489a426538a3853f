// ort_bench.js: the browser benchmark's peer, evaluated in the page after stepformer's own
// benchmark has run in it (tests/web/bench_page.py): ONNX Runtime Web, its WebAssembly SIMD
// backend on one thread, running the models scripts/export_onnx.py exported from PyTorch.
// Each pass is warmed up as stepformer's is (at least 3 runs and 300 ms, so V8 has compiled
// the hot code with its optimising compiler), then timed RUNS times. Resolves to a JSON string.
(async () => {
  const RUNS = 10;
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = '/ort/';
  const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const manifest = await (await fetch('/onnx/manifest.json')).json();
  const ids = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, a.length]);
  const now = () => performance.now();

  const encoder = await ort.InferenceSession.create('/onnx/dates_encoder.onnx', options);
  const decoder = await ort.InferenceSession.create('/onnx/dates_decoder.onnx', options);
  const base = await ort.InferenceSession.create('/onnx/base_forward.onnx', options);
  const gpt2 = await ort.InferenceSession.create('/onnx/gpt2_forward.onnx', options);

  // The tutorial's greedy_decode: encode once, then each round the decoder over the prefix
  // and the argmax of the last position, until eos or max_len rounds.
  const d = manifest.dates;
  async function datesPass() {
    const { memory } = await encoder.run({ src: ids(d.src) });
    const ys = [d.bos];
    for (let round = 0; round < d.max_len; round++) {
      const { logits } = await decoder.run({ tgt: ids(ys), memory });
      let best = 0;
      for (let v = 1; v < logits.data.length; v++) if (logits.data[v] > logits.data[best]) best = v;
      ys.push(best);
      if (best === d.eos) break;
    }
    return ys.slice(1);
  }
  const baseFeeds = { src: ids(manifest.base.src), tgt: ids(manifest.base.tgt) };
  const basePass = async () => (await base.run(baseFeeds)).logits.dims;
  // GPT-2: the logits of every position; the answer is the argmax of the last one.
  const g = manifest.gpt2, gptFeeds = { ids: ids(g.ids) };
  async function gptPass() {
    const { logits } = await gpt2.run(gptFeeds);
    const V = logits.dims[2], last = logits.data.subarray(logits.data.length - V);
    let best = 0;
    for (let v = 1; v < V; v++) if (last[v] > last[best]) best = v;
    return best;
  }

  async function timed(pass) {
    let answer;
    const warmFrom = now();
    for (let w = 0; w < 3 || now() - warmFrom < 300; w++) answer = await pass();
    const t = [];
    for (let k = 0; k < RUNS; k++) {
      const t0 = now();
      await pass();
      t.push(now() - t0);
    }
    t.sort((a, b) => a - b);
    return { median_ms: (t[(RUNS - 1) >> 1] + t[RUNS >> 1]) / 2, min_ms: t[0], answer };
  }
  const dates = await timed(datesPass);
  const forward = await timed(basePass);
  const gptForward = await timed(gptPass);
  return JSON.stringify({
    ort: ort.env.versions ? ort.env.versions.web || ort.env.versions.common : 'unknown',
    dates: { median_ms: dates.median_ms, min_ms: dates.min_ms, answer: dates.answer, expect: d.expect },
    forward: { median_ms: forward.median_ms, min_ms: forward.min_ms, dims: forward.answer },
    gpt2: { median_ms: gptForward.median_ms, min_ms: gptForward.min_ms, answer: gptForward.answer, expect: g.expect },
  });
})()
