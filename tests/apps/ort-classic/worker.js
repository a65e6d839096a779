// Classic worker: onnxruntime-web's UMD bundle (C++ WebGPU EP, asyncify build) via importScripts,
// with URLs relative to this worker's own location.
importScripts('../node_modules/onnxruntime-web/dist/ort.webgpu.min.js', '../shared/ort-greedy.js');

ort.env.wasm.wasmPaths = new URL('../node_modules/onnxruntime-web/dist/', self.location.href).href;
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';

self.onmessage = async (e) => {
  try {
    self.postMessage({ status: 'loading' });
    const base = new URL('../models/qwen2-tiny/', self.location.href);
    const config = await (await fetch(new URL('config.json', base))).json();
    const expected = await (await fetch(new URL('expected.json', base))).json();
    const result = await self.ortGreedyDecode(ort, {
      modelUrl: new URL('onnx/model.onnx', base).href,
      promptIds: expected.prompt_ids,
      tokens: e.data.tokens,
      layers: config.num_hidden_layers,
      kvHeads: config.num_key_value_heads,
      headDim: config.head_dim,
    });
    self.postMessage({ status: 'done', result });
  } catch (err) {
    self.postMessage({ status: `failed: ${err && err.message || err}` });
  }
};
