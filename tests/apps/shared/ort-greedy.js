// Greedy decoding with onnxruntime-web as a Transformers.js-style app does it, as a classic
// script (importScripts): defines self.ortGreedyDecode. Prefill the prompt in one run, then one
// id per run; present.N.key/value stay on the GPU (preferredOutputLocation 'gpu-buffer') and are
// fed back as past_key_values.N.key/value; logits come back to the CPU (one GPUBuffer.mapAsync).
/* global self */
(function () {
  'use strict';

  function argmax(values) {
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
    return best;
  }

  function int64(ort, values, dims) {
    return new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), dims);
  }

  /**
   * @param ort the onnxruntime-web namespace (UMD global `ort`)
   * @param opts {modelUrl, promptIds: number[], tokens: number, layers, kvHeads, headDim}
   * @returns {Promise<{tokens: number[], msPerToken: number[], ort: string}>}
   */
  self.ortGreedyDecode = async function (ort, opts) {
    const bytes = new Uint8Array(await (await fetch(opts.modelUrl)).arrayBuffer());
    const preferredOutputLocation = {};
    for (let i = 0; i < opts.layers; i++) {
      preferredOutputLocation[`present.${i}.key`] = 'gpu-buffer';
      preferredOutputLocation[`present.${i}.value`] = 'gpu-buffer';
    }
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['webgpu'], preferredOutputLocation });
    let past = {};
    for (const n of session.inputNames.filter((x) => x.startsWith('past_key_values'))) {
      past[n] = new ort.Tensor('float32', new Float32Array(0), [1, opts.kvHeads, 0, opts.headDim]);
    }
    const out = { tokens: [], msPerToken: [], ort: ort.env.versions.web };
    let ids = opts.promptIds;
    let total = 0;
    for (let step = 0; step < opts.tokens; step++) {
      const t0 = performance.now();
      const n = ids.length;
      const feeds = {
        input_ids: int64(ort, ids, [1, n]),
        attention_mask: int64(ort, new Array(total + n).fill(1), [1, total + n]),
        position_ids: int64(ort, ids.map((_, j) => total + j), [1, n]),
        ...past,
      };
      const results = await session.run(feeds);
      const logits = results.logits;
      const vocab = logits.dims[logits.dims.length - 1];
      const token = argmax(logits.data.subarray(logits.data.length - vocab));
      for (const name of Object.keys(past)) {
        past[name].dispose?.();
        past[name] = results[name.replace('past_key_values', 'present')];
      }
      total += n;
      ids = [token];
      out.tokens.push(token);
      out.msPerToken.push(performance.now() - t0);
    }
    for (const t of Object.values(past)) t.dispose?.();
    await session.release();
    return out;
  };
})();
