// ort-decode: greedy LLM decoding with the real onnxruntime-web, one probe step per generated token.
// Over 400 lines on purpose: the Transformers.js-style loop with its four variants and KV cache
// modes in one module, in the order a reader follows a token.
//
// What it measures: the WebGPU calls onnxruntime-web makes per token. Its WebGPU execution
// provider creates one GPUBindGroup per dispatch and reuses none outside graph capture
// (shared/references.md, "onnxruntime field report" and "onnxruntime WebGPU EP internals";
// upstream: onnxruntime/core/providers/webgpu/webgpu_context.cc, WebGpuContext::Run).
//
// Step i (ctx.probe.beginStep/endStep) is generated token i: step 0 prefills the prompt in one
// run, later steps run one id, greedy argmax over the last position's logits. With
// kvCache 'growing' (default, as Transformers.js does) present.N.key/value come back as GPU
// buffers (preferredOutputLocation 'gpu-buffer') and are fed as past on the next run, the old
// tensors disposed. With 'static' (as onnxruntime-genai does) one GPUBuffer of kvMaxLength
// positions per past/present pair is both fed and fetched. Input/output names, types and cache
// dims come from the session (inputNames, outputNames, inputMetadata), not from this file.
//
// Parameters (ctx.params, defaults in manifest.json):
//   bundle        webgpu: ort.webgpu.bundle.min.mjs (C++ EP, asyncify build)
//                 jspi:   ort.jspi.bundle.min.mjs (C++ EP, JSPI build; SKIP without WebAssembly.Suspending)
//                 jsep:   ort.bundle.min.mjs (the plain `onnxruntime-web` import: the older JS EP)
//   model         URL of an .onnx file; empty: models/<profileName>/model.onnx next to this file
//   prompt        comma-separated prompt token ids
//   kvCache       'growing' or 'static' (graph-capture always uses 'static')
//   kvLocation    growing cache only: 'gpu-buffer' (Transformers.js) or 'cpu' for present.* outputs
//   kvMaxLength   static cache capacity in positions; 0: prompt length + tokens
//   storageBufferCacheMode, uniformBufferCacheMode, validationMode, preferredLayout: WebGPU EP
//                 options passed through when non-empty (the JS EP ignores the cache modes)
//   bindGroupCacheMaxEntries, forceGcEvery, forceGcMb: see the variants in manifest.json
//   logSeverityLevel  onnxruntime's log level (0 verbose ... 4 fatal)
//   ortDist       URL of onnxruntime-web's dist/ folder (default: /node_modules/onnxruntime-web/dist/)
// ctx.params.seed is not used: the weights are fixed in the model file.

import {installBindGroupCache, reuseResult, reuseSnapshotSteps} from '../lib/bind-group-cache.js';
import { fnv1a32Hex } from '../lib/hash.js';
import { DEFAULT_DIST, epOptions, fetchBytes, importOrt } from '../lib/ort.js';



function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

function parseIds(text) {
  const ids = String(text).split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (!ids.length || ids.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new Error(`ort-decode: prompt must be comma-separated token ids, got ${JSON.stringify(text)}`);
  }
  return ids;
}

/**
 * Find the roles of the session's inputs and outputs from their names:
 * ids, attention mask, optional position ids, and past -> present pairs keyed by (layer, key|value).
 * Handles past_key_values.N.key -> present.N.key (onnxruntime-genai, Transformers.js) and
 * past_key.N -> present_key.N style names.
 */
export function discoverIo(inputNames, outputNames) {
  const pick = (names, re) => names.find((n) => re.test(n));
  const ids = pick(inputNames, /^input_ids$/) ?? pick(inputNames, /input_?ids/i);
  const mask = pick(inputNames, /attention_?mask/i);
  const positions = pick(inputNames, /position_?ids/i);
  if (!ids) throw new Error(`ort-decode: no input_ids among inputs ${JSON.stringify(inputNames)}`);
  const cacheSlot = (name) => {
    const layer = name.match(/\d+/);
    // The last "key"/"value" in the name decides: past_key_values.0.value is a value.
    const lower = name.toLowerCase();
    const k = lower.lastIndexOf('key');
    const v = lower.lastIndexOf('value');
    const kind = k < 0 && v < 0 ? null : k > v ? 'key' : 'value';
    return layer && kind ? `${Number(layer[0])}.${kind}` : null;
  };
  const pastBySlot = new Map();
  for (const n of inputNames) {
    if (n === ids || n === mask || n === positions) continue;
    const slot = /past/i.test(n) ? cacheSlot(n) : null;
    if (!slot) throw new Error(`ort-decode: input ${n} is neither ids, mask, positions nor a past key/value`);
    pastBySlot.set(slot, n);
  }
  const presentBySlot = new Map();
  for (const n of outputNames) {
    const slot = /present/i.test(n) ? cacheSlot(n) : null;
    if (slot) presentBySlot.set(slot, n);
  }
  const logits = pick(outputNames, /^logits$/) ??
      outputNames.find((n) => ![...presentBySlot.values()].includes(n));
  if (!logits) throw new Error(`ort-decode: no logits among outputs ${JSON.stringify(outputNames)}`);
  const cache = [];
  for (const [slot, past] of pastBySlot) {
    const present = presentBySlot.get(slot);
    if (!present) throw new Error(`ort-decode: no present output for ${past} (slot ${slot})`);
    cache.push({slot, past, present});
  }
  cache.sort((a, b) => a.slot.localeCompare(b.slot, 'en', {numeric: true}));
  return {ids, mask, positions, logits, cache};
}

function metadataOf(session, name) {
  const list = session.inputMetadata;
  if (!list) return null;
  return Array.isArray(list) ? list.find((m) => m.name === name) ?? null : list[name] ?? null;
}

/** Past-cache tensor type and [heads, head_size] from input metadata, else from the profile. */
function cacheDims(session, pastName, profile) {
  const meta = metadataOf(session, pastName);
  const shape = meta?.shape ?? [];
  let heads = shape[1];
  let headSize = shape[3];
  if (typeof heads !== 'number' || typeof headSize !== 'number') {
    heads = profile?.kv_heads;
    headSize = profile?.head_dim;
  }
  if (!Number.isInteger(heads) || !Number.isInteger(headSize)) {
    throw new Error(`ort-decode: cannot tell the cache dims of ${pastName} (metadata shape ` +
                    `${JSON.stringify(shape)}); give profile kv_heads and head_dim`);
  }
  return {type: meta?.type ?? 'float32', heads, headSize};
}

const TYPED = {
  int64: (n) => new BigInt64Array(n),
  int32: (n) => new Int32Array(n),
  float32: (n) => new Float32Array(n),
  float16: (n) => new Uint16Array(n),
};

function intTensor(ort, type, values, dims) {
  const data = TYPED[type](values.length);
  for (let i = 0; i < values.length; i++) data[i] = type === 'int64' ? BigInt(values[i]) : values[i];
  return new ort.Tensor(type, data, dims);
}

function forceGc(mb) {
  // The field report's workaround (shared/references.md): allocate ~32 MB of throwaway
  // ArrayBuffers so the engine's GC runs and collects piled-up GPUBindGroup wrappers.
  let sum = 0;
  for (let i = 0; i < mb; i++) {
    const buf = new ArrayBuffer(1 << 20);
    new Uint8Array(buf)[i] = 1;
    sum += buf.byteLength;
  }
  return sum;
}

// Per-token cache activity: hits/misses/evictions are deltas since the previous call (the
// shim's stats() are cumulative); size and the cap are the state at the token's end.
let lastCacheStats = null;
function cacheExtra(cache) {
  if (!cache) return {};
  const s = cache.stats();
  const prev = lastCacheStats ?? {hits: 0, misses: 0, evictions: 0};
  lastCacheStats = {...s};
  const hits = s.hits - prev.hits;
  const misses = s.misses - prev.misses;
  const w = cache.takeWindow();
  return {
    bind_group_cache_hits: hits,
    bind_group_cache_misses: misses,
    bind_group_cache_hit_rate: hits + misses ? hits / (hits + misses) : null,
    bind_group_cache_evictions: s.evictions - prev.evictions,
    bind_group_cache_size: s.size,
    bind_group_cache_max_entries: s.maxEntries,
    // the working set: keys looked up this token, how many distinct, how many never seen before
    bind_group_cache_lookups: w.lookups,
    bind_group_cache_distinct_keys: w.distinctKeys,
    bind_group_cache_new_keys: w.coldKeys,
  };
}

async function createSession(ort, bytes, options, what) {
  try {
    return await ort.InferenceSession.create(bytes, options);
  } catch (e) {
    const msg = e?.message ?? String(e);
    if (options.enableGraphCapture) throw new Error(`SKIP: onnxruntime-web refused graph capture: ${msg}`);
    throw new Error(`ort-decode: could not create a session for ${what}: ${msg}`);
  }
}

/** Types and cache dims of the discovered inputs, plus the symbolic dim names of each. */
function describeInputs(session, io, profile) {
  const typeOf = (name, fallback) => (name ? metadataOf(session, name)?.type ?? fallback : null);
  const shapeOf = (name) => (name ? metadataOf(session, name)?.shape ?? [] : []);
  return {
    idsType: typeOf(io.ids, 'int64'),
    maskType: typeOf(io.mask, 'int64'),
    posType: typeOf(io.positions, 'int64'),
    cache: io.cache.length ? cacheDims(session, io.cache[0].past, profile) : null,
    idsShape: shapeOf(io.ids),
    maskShape: shapeOf(io.mask),
    pastShape: io.cache.length ? shapeOf(io.cache[0].past) : [],
  };
}

export async function run(ctx) {
  const params = ctx.params ?? {};
  const variant = params.variant ?? 'default';
  if (!['default', 'bind-group-cache', 'graph-capture', 'force-gc'].includes(variant)) {
    throw new Error(`ort-decode: unknown variant ${variant}`);
  }
  const bundle = params.bundle || 'webgpu';
  const tokens = Number(params.tokens ?? 32);
  const here = globalThis.location?.href;
  const dist = params.ortDist ? new URL(params.ortDist, here).href : DEFAULT_DIST;
  const profileName = params.profileName || 'tiny';
  const modelUrl = params.model
    ? new URL(params.model, here).href
    : new URL(`./models/${profileName}/model.onnx`, import.meta.url).href;
  const prompt = parseIds(params.prompt ?? '1,17,42,99,7');
  const graphCapture = variant === 'graph-capture';
  // growing: Transformers.js (present returned, fed back as past, cache grows a position a token).
  // static: onnxruntime-genai's shared past/present buffer of fixed capacity; graph capture needs it.
  const kvCache = graphCapture ? 'static' : params.kvCache || 'growing';
  if (!['growing', 'static'].includes(kvCache)) throw new Error(`ort-decode: kvCache must be growing or static, got ${kvCache}`);
  if (kvCache === 'static' && bundle === 'jsep' && !graphCapture) {
    // Measured: the JS EP's GroupQueryAttention sizes present as past + new positions, so a
    // pre-allocated present of the cache capacity fails ("Failed to generate kernel's output[1]").
    throw new Error('ort-decode: kvCache=static needs the C++ EP (bundle webgpu or jspi); the JS EP cannot share past/present buffers');
  }

  // Installed before any session exists so every bind group ORT makes goes through it.
  const bgCache = variant === 'bind-group-cache'
    ? installBindGroupCache({maxEntries: Number(params.bindGroupCacheMaxEntries ?? 4096)})
    : null;
  try {
    const ort = await importOrt(bundle, dist);
    ort.env.logLevel = 'error';
    const modelBytes = await fetchBytes(modelUrl, 'model');
    const base = {
      executionProviders: [epOptions(params)],
      graphOptimizationLevel: 'all',
      logSeverityLevel: Number(params.logSeverityLevel ?? 3),
    };
    // --model with external data: the harness passes [{path, url}] for the files beside it;
    // ORT web takes them as SessionOptions.externalData [{path, data}] (data: a URL it fetches).
    if (Array.isArray(params.externalData) && params.externalData.length) {
      base.externalData = params.externalData.map((e) => ({path: e.path, data: new URL(e.url, here).href}));
    }
    const t0 = performance.now();
    // A first session only to learn the I/O names and metadata the real session's options need.
    let session = await createSession(ort, modelBytes, base, modelUrl);
    const io = discoverIo(session.inputNames, session.outputNames);
    const meta = describeInputs(session, io, params.profile);
    await session.release();

    const maxLength = Number(params.kvMaxLength || prompt.length + tokens);
    const options = {...base};
    if (graphCapture) {
      // Graph capture freezes shapes: pin every symbolic dim so onnxruntime can also fold the
      // Shape(attention_mask) subgraph (the WebGPU EP has no Shape kernel; a CPU node refuses capture).
      options.enableGraphCapture = true;
      options.freeDimensionOverrides = {};
      const pin = (shape, values) => shape.forEach((d, i) => {
        if (typeof d === 'string' && d && values[i] !== undefined) options.freeDimensionOverrides[d] = values[i];
      });
      pin(meta.idsShape, [1, 1]);
      pin(meta.maskShape, [1, maxLength]);
      pin(meta.pastShape, [1, undefined, maxLength, undefined]);
    } else {
      options.preferredOutputLocation = {[io.logits]: 'cpu'};
      for (const c of io.cache) {
        options.preferredOutputLocation[c.present] = kvCache === 'static' ? 'gpu-buffer' : params.kvLocation || 'gpu-buffer';
      }
    }
    session = await createSession(ort, modelBytes, options, modelUrl);
    const sessionMs = performance.now() - t0;
    ctx.log?.(`ort-decode: ${bundle} bundle, ort ${JSON.stringify(ort.env.versions)}, model ${modelUrl}, ` +
              `kv ${kvCache}, io ${JSON.stringify(io)}, inputs ${JSON.stringify(meta)}`);

    const decoder = kvCache === 'growing'
      ? growingDecoder(ort, session, io, meta)
      : await staticDecoder(ort, session, io, meta, {capture: graphCapture, maxLength});

    const out = {tokens: [], logitsHashes: [], stepMs: []};
    const reuseSnapshots = [];
    const reuseSteps = reuseSnapshotSteps(tokens);
    const forceGcEvery = Number(params.forceGcEvery ?? 16);
    const forceGcMb = Number(params.forceGcMb ?? 32);
    try {
      for (let step = 0; step < tokens; step++) {
        const newIds = step === 0 ? prompt : [out.tokens[step - 1]];
        ctx.probe.beginStep(step);
        const tStep = performance.now();
        let last;
        try {
          last = await decoder.step(newIds);
        } catch (e) {
          const msg = e?.message ?? String(e);
          if (msg.startsWith('SKIP:')) throw e;
          throw new Error(`ort-decode: session.run failed at token ${step}: ${msg}`);
        }
        const token = argmax(last);
        const logitsHash = fnv1a32Hex(last);
        const extra = cacheExtra(bgCache);
        // the working set after the prefill (token 0) and over the last half of the tokens
        if (bgCache && reuseSteps.includes(step)) reuseSnapshots.push({step, ...bgCache.reuseDistances()});
        if (variant === 'force-gc' && (step + 1) % forceGcEvery === 0) {
          extra.force_gc_bytes = forceGc(forceGcMb);
        }
        out.tokens.push(token);
        out.logitsHashes.push(logitsHash);
        out.stepMs.push(performance.now() - tStep);
        ctx.probe.endStep(step, {token, logitsHash, extra});
        await ctx.probe.checkpoint(step); // --gc-checkpoints: the harness's forced collection, between tokens
      }
    } finally {
      decoder.dispose();
      await session.release();
    }

    const later = out.stepMs.slice(1).sort((a, b) => a - b);
    return {
      tokens: out.tokens,
      logitsHashes: out.logitsHashes,
      ortVersion: ort.env.versions,
      bundle,
      variant,
      kvCache,
      model: modelUrl,
      promptIds: prompt,
      io,
      cacheDims: meta.cache,
      sessionCreateMs: Math.round(sessionMs * 10) / 10,
      medianMsPerToken: later.length ? later[later.length >> 1] : out.stepMs[0],
      ...(bgCache ? {bindGroupCache: bgCache.stats(), bindGroupCacheReuse: reuseResult(reuseSnapshots, bgCache)} : {}),
    };
  } finally {
    bgCache?.uninstall();
  }
}

/** Transformers.js-style: ids/mask/positions from the CPU, present.* fed back as past.* */
function growingDecoder(ort, session, io, meta) {
  const {cache: dims} = meta;
  let past = {};
  for (const c of io.cache) {
    past[c.past] = new ort.Tensor(dims.type, TYPED[dims.type](0), [1, dims.heads, 0, dims.headSize]);
  }
  let total = 0;
  return {
    async step(newIds) {
      const n = newIds.length;
      const feeds = {[io.ids]: intTensor(ort, meta.idsType, newIds, [1, n]), ...past};
      if (io.mask) feeds[io.mask] = intTensor(ort, meta.maskType, new Array(total + n).fill(1), [1, total + n]);
      if (io.positions) feeds[io.positions] = intTensor(ort, meta.posType, newIds.map((_, j) => total + j), [1, n]);
      const results = await session.run(feeds);
      const logits = results[io.logits];
      const vocab = logits.dims[logits.dims.length - 1];
      const last = logits.data.slice(logits.data.length - vocab);
      logits.dispose?.();
      for (const c of io.cache) {
        past[c.past].dispose?.(); // the previous token's present: back to ORT's buffer cache
        past[c.past] = results[c.present];
      }
      total += n;
      return last;
    },
    dispose() {
      for (const t of Object.values(past)) t.dispose?.();
      past = {};
    },
  };
}

/**
 * Static KV cache of fixed capacity `maxLength`, one GPUBuffer per past/present pair fed as the
 * past input and fetched as the present output (GroupQueryAttention's "past and present share
 * buffer" mode, ORT contrib op docs; onnxruntime-genai decodes this way). With capture = true
 * (graph capture, session option enableGraphCapture) onnxruntime-web also requires every input and
 * output to be a GPU-buffer tensor and a replay re-encodes the first run's dispatches with frozen
 * shapes (shared/references.md, "onnxruntime WebGPU EP internals"), so each run takes one token,
 * attention_mask is [1, maxLength] with ones at the filled positions, and the prompt is fed one
 * token per run.
 */
async function staticDecoder(ort, session, io, meta, {capture, maxLength}) {
  const device = await ort.env.webgpu.device;
  if (!device) throw new Error('SKIP: onnxruntime-web exposes no GPUDevice (ort.env.webgpu.device)');
  const U = globalThis.GPUBufferUsage;
  const bpe = {int64: 8, int32: 4, float32: 4, float16: 2};
  const buffers = [];
  const gpuTensor = (type, dims) => {
    const bytes = dims.reduce((a, b) => a * b, 1) * bpe[type];
    const buffer = device.createBuffer({size: Math.max(16, Math.ceil(bytes / 16) * 16), usage: U.STORAGE | U.COPY_SRC | U.COPY_DST});
    buffers.push(buffer);
    return {buffer, tensor: ort.Tensor.fromGpuBuffer(buffer, {dataType: type, dims})};
  };
  const write = (entry, type, values, offsetElems = 0) => {
    const arr = TYPED[type](values.length);
    for (let i = 0; i < values.length; i++) arr[i] = type === 'int64' ? BigInt(values[i]) : values[i];
    device.queue.writeBuffer(entry.buffer, offsetElems * bpe[type], arr);
  };
  const {cache: dims} = meta;
  const kv = {};
  for (const c of io.cache) kv[c.slot] = gpuTensor(dims.type, [1, dims.heads, maxLength, dims.headSize]);

  let ids, mask, pos, logits, readback, vocab;
  if (capture) {
    const logitsMeta = session.outputMetadata?.find?.((m) => m.name === io.logits);
    vocab = logitsMeta?.shape?.[logitsMeta.shape.length - 1];
    if (!Number.isInteger(vocab)) throw new Error('SKIP: graph capture needs a static vocab dim on logits to pre-allocate it');
    ids = gpuTensor(meta.idsType, [1, 1]);
    if (io.mask) {
      mask = gpuTensor(meta.maskType, [1, maxLength]);
      write(mask, meta.maskType, new Array(maxLength).fill(0));
    }
    if (io.positions) pos = gpuTensor(meta.posType, [1, 1]);
    logits = gpuTensor('float32', [1, 1, vocab]);
    readback = device.createBuffer({size: logits.buffer.size, usage: U.MAP_READ | U.COPY_DST});
    buffers.push(readback);
  }

  let filled = 0;
  let runs = 0;
  async function runOnce(newIds) {
    const n = newIds.length;
    if (filled + n > maxLength) throw new Error(`ort-decode: static KV cache of ${maxLength} positions is full`);
    const feeds = {};
    const fetches = {};
    for (const c of io.cache) {
      feeds[c.past] = kv[c.slot].tensor;
      fetches[c.present] = kv[c.slot].tensor;
    }
    if (capture) {
      write(ids, meta.idsType, newIds);
      feeds[io.ids] = ids.tensor;
      if (mask) {
        write(mask, meta.maskType, [1], filled);
        feeds[io.mask] = mask.tensor;
      }
      if (pos) {
        write(pos, meta.posType, [filled]);
        feeds[io.positions] = pos.tensor;
      }
      fetches[io.logits] = logits.tensor;
    } else {
      feeds[io.ids] = intTensor(ort, meta.idsType, newIds, [1, n]);
      if (io.mask) feeds[io.mask] = intTensor(ort, meta.maskType, new Array(filled + n).fill(1), [1, filled + n]);
      if (io.positions) feeds[io.positions] = intTensor(ort, meta.posType, newIds.map((_, j) => filled + j), [1, n]);
      fetches[io.logits] = null;
    }
    let results;
    try {
      results = await session.run(feeds, fetches);
    } catch (e) {
      if (capture) {
        const what = e instanceof Error && e.name !== 'Error' ? `${e.name}: ${e.message}` : e?.message ?? String(e);
        const when = runs === 0 ? 'the capturing run' : `run ${runs + 1} (a replay)`;
        throw new Error(`SKIP: onnxruntime-web graph capture failed in ${when}: ${what}`, {cause: e});
      }
      throw e;
    }
    filled += n;
    runs++;
    return results;
  }

  return {
    async step(newIds) {
      if (!capture) {
        const results = await runOnce(newIds);
        const out = results[io.logits];
        const v = out.dims[out.dims.length - 1];
        const last = out.data.slice(out.data.length - v);
        out.dispose?.();
        return last;
      }
      for (const id of newIds) await runOnce([id]);
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(logits.buffer, 0, readback, 0, logits.buffer.size);
      device.queue.submit([enc.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const last = new Float32Array(readback.getMappedRange().slice(0, vocab * 4));
      readback.unmap();
      return last;
    },
    dispose() {
      for (const b of buffers) b.destroy();
    },
  };
}
