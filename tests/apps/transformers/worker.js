// Transformers.js text generation in a module worker: the app as a user would write it.
// Relative URLs on purpose (resolved against this worker's own URL): the library, the model
// folder and onnxruntime-web's wasm files next to it.
import { env, AutoTokenizer, AutoModelForCausalLM } from '../node_modules/@huggingface/transformers/dist/transformers.js';

env.allowRemoteModels = false;
env.allowLocalModels = true;
// a path, not a URL: Transformers.js treats an http(s) URL here as remote
env.localModelPath = new URL('../models/', self.location.href).pathname;
env.useBrowserCache = false;
// The wasm of the onnxruntime-web build Transformers.js bundles (1.31.0-dev.20260914-8d85527a0),
// from the local npm install instead of a CDN.
env.backends.onnx.wasm.wasmPaths = new URL('../node_modules/onnxruntime-web/dist/', self.location.href).href;
env.backends.onnx.wasm.numThreads = 1;

self.addEventListener('message', async (e) => {
  const tokens = e.data.tokens;
  try {
    self.postMessage({ status: 'loading' });
    const tokenizer = await AutoTokenizer.from_pretrained('qwen2-tiny');
    const model = await AutoModelForCausalLM.from_pretrained('qwen2-tiny', { device: 'webgpu', dtype: 'fp32' });
    const prompt = 'the bind group of each dispatch';
    const inputs = tokenizer(prompt);
    self.postMessage({ status: 'generating' });
    const t0 = performance.now();
    // A streamer gets each new token as it is generated: its arrival times give ms per token.
    const arrivals = [];
    const streamer = { put: () => { arrivals.push(performance.now()); }, end: () => {} };
    const out = await model.generate({ ...inputs, max_new_tokens: tokens, do_sample: false, streamer });
    const ms = performance.now() - t0;
    // put() is called with the prompt first, then once per new token
    const times = arrivals.slice(-tokens);
    const msPerToken = times.map((t, i) => t - (i ? times[i - 1] : arrivals[arrivals.length - tokens - 1] ?? t0));
    const all = Array.from(out.tolist()[0], Number);
    const promptIds = Array.from(inputs.input_ids.tolist()[0], Number);
    const result = {
      promptIds,
      tokens: all.slice(promptIds.length),
      text: tokenizer.decode(all.slice(promptIds.length)),
      generateMs: ms,
      msPerToken,
      ort: env.backends.onnx.versions,
    };
    await model.dispose();
    self.postMessage({ status: 'done', result });
  } catch (err) {
    self.postMessage({ status: `failed: ${err?.message ?? err}` });
  }
});
