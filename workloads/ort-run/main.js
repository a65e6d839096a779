// ort-run: any ONNX model (not only decoders) run with the real onnxruntime-web WebGPU execution
// provider, session.run repeated, sessions created and released in cycles. workloads/README.md
// contract; README.md here for the question and the expected signature.
//
// Steps, per session cycle c (`sessions` cycles; --tokens runs per session):
//   create     InferenceSession.create (and, with device=per-session, a new adapter + device)
//   run r      one session.run with the inputs (phase first-run for r = 0, else steady); outputs
//              come back to the CPU (what a detector run per camera frame does), are hashed
//              (logits_hash) and summed per output (extra output_<i>_sum)
//   release    session.release() (and device.destroy() with device=per-session), then
//              `settle_ms` before the next cycle so the harness's process samples carry this step
// Every step's extra has `phase`, `cycle`, and the cycle's `run`; the first run also
// time_to_first_result_ms (from the start of its cycle's create step to its outputs on the CPU).
//
// Inputs: from the session's inputMetadata (names, types, shapes); symbolic dims from `dims`
// (and the profile's dims), other dynamic dims from `dim_default`; data from a .npy per input
// (`inputs`) or generated (`fill`, seeded by --seed; `frames=new` gives every run new data).

import { installBindGroupCache } from '../lib/bind-group-cache.js';
import { fnv1a32Hex } from '../lib/hash.js';
import { epOptions, fetchBytes, importOrt, DEFAULT_DIST } from '../lib/ort.js';
import { TYPES, generate, parseDims, parseNpy, parsePairs, resolveShape, sumOf } from './inputs.js';

const MAX_OUTPUT_SUMS = 8;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function metadataList(list) {
  if (!list) return [];
  return Array.isArray(list) ? list : Object.entries(list).map(([name, m]) => ({ name, ...m }));
}

/** [{name, type, dims}] of every input, from the session and the parameters. */
export function planInputs(session, npy, dims, dimDefault) {
  const meta = new Map(metadataList(session.inputMetadata).map((m) => [m.name, m]));
  return session.inputNames.map((name) => {
    if (npy.has(name)) {
      const { type, shape } = npy.get(name);
      return { name, type, dims: shape, source: 'npy' };
    }
    const m = meta.get(name);
    if (m && m.isTensor === false) throw new Error(`input ${name} is not a tensor (${JSON.stringify(m)}); give it as .npy? ort-run feeds tensors only`);
    const type = m?.type ?? 'float32';
    if (!TYPES[type]) throw new Error(`input ${name} has type ${type}; ort-run generates ${Object.keys(TYPES).join(', ')} (or give --param inputs=${name}=URL.npy)`);
    return { name, type, dims: resolveShape(m?.shape, dims, dimDefault, name), source: 'generated' };
  });
}

function feedsFor(ort, plan, npy, fill, seed) {
  const feeds = {};
  plan.forEach((p, i) => {
    const count = p.dims.reduce((a, b) => a * b, 1);
    const data = p.source === 'npy' ? npy.get(p.name).data : generate(p.type, count, fill, seed * 1000003 + i);
    feeds[p.name] = new ort.Tensor(p.type, data, p.dims);
  });
  return feeds;
}

/** The outputs' bytes hashed in outputNames order, and each output's sum (first MAX_OUTPUT_SUMS). */
function digest(session, results) {
  const parts = [];
  const sums = {};
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (!t || t.location !== 'cpu' || !t.data) return;
    parts.push(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    if (i < MAX_OUTPUT_SUMS) sums[`output_${i}_sum`] = sumOf(t.data, t.type);
  });
  const total = parts.reduce((a, p) => a + p.length, 0);
  const all = new Uint8Array(total);
  let o = 0;
  for (const p of parts) { all.set(p, o); o += p.length; }
  return { hash: fnv1a32Hex(all), sums };
}

/** A device with every feature and limit the adapter offers (what onnxruntime-web asks for itself). */
async function fullDevice(adapter, label) {
  const requiredLimits = {};
  for (const k in adapter.limits) if (typeof adapter.limits[k] === 'number') requiredLimits[k] = adapter.limits[k];
  return adapter.requestDevice({ label, requiredFeatures: [...adapter.features], requiredLimits });
}

export async function run(ctx) {
  const p = ctx.params ?? {};
  const variant = p.variant ?? 'default';
  if (!['default', 'bind-group-cache'].includes(variant)) throw new Error(`ort-run: unknown variant ${variant}`);
  const runs = Number(p.tokens ?? 8);
  const sessions = Number(p.sessions ?? 1);
  const deviceMode = p.device ?? 'ort';
  if (!['ort', 'shared', 'per-session'].includes(deviceMode)) throw new Error(`ort-run: --param device=${deviceMode}: must be one of ort, shared, per-session`);
  const fill = p.fill ?? 'random';
  if (!['random', 'zeros', 'ones'].includes(fill)) throw new Error(`ort-run: --param fill=${fill}: must be one of random, zeros, ones`);
  const frames = p.frames ?? 'new';
  if (!['new', 'same'].includes(frames)) throw new Error(`ort-run: --param frames=${frames}: must be one of new, same`);
  const settleMs = Number(p.settle_ms ?? 300);
  const seed = Number(p.seed ?? 1);
  const here = globalThis.location?.href;
  const dist = p.ortDist ? new URL(p.ortDist, here).href : DEFAULT_DIST;
  const bundle = p.bundle || 'webgpu';
  const modelUrl = p.model ? new URL(p.model, here).href
    : new URL(`./models/${p.profileName || 'conv-tiny'}/model.onnx`, import.meta.url).href;
  // profile dims (e.g. batch) are defaults for symbolic dims; --param dims=… wins
  const dims = new Map([...Object.entries(p.profile ?? {}), ...parseDims(p.dims ?? '')]);
  const dimDefault = Number(p.dim_default ?? 1);
  const npyUrls = parsePairs(p.inputs ?? '', 'inputs');

  const bgCache = variant === 'bind-group-cache' ? installBindGroupCache({ maxEntries: Number(p.bindGroupCacheMaxEntries ?? 4096) }) : null;
  const cycles = [];
  let step = 0;
  try {
    const ort = await importOrt(bundle, dist);
    ort.env.logLevel = 'error';
    const modelBytes = await fetchBytes(modelUrl, 'model');
    const npy = new Map();
    for (const [name, url] of npyUrls) {
      try {
        npy.set(name, parseNpy(await fetchBytes(new URL(url, here).href, `.npy for input ${name}`)));
      } catch (e) {
        throw new Error(`ort-run: --param inputs ${name}=${url}: ${e.message}`);
      }
    }
    const base = { graphOptimizationLevel: 'all', logSeverityLevel: Number(p.logSeverityLevel ?? 3) };
    if (Array.isArray(p.externalData) && p.externalData.length) {
      base.externalData = p.externalData.map((e) => ({ path: e.path, data: new URL(e.url, here).href }));
    }
    const shared = deviceMode === 'shared' ? await fullDevice(ctx.adapter, 'ort-run.shared') : null;
    let plan = null;
    for (let c = 0; c < sessions; c++) {
      const cyc = { cycle: c, steps: [] };
      cycles.push(cyc);
      // --- create ---
      ctx.probe.beginStep(step);
      const tCreate = performance.now();
      let device = shared;
      if (deviceMode === 'per-session') {
        const adapter = await navigator.gpu.requestAdapter();
        if (!adapter) throw new Error('ort-run: device=per-session: requestAdapter() returned null for a new session');
        device = await fullDevice(adapter, `ort-run.session${c}`);
      }
      let session;
      try {
        session = await ort.InferenceSession.create(modelBytes, { ...base, executionProviders: [epOptions(p, device)] });
      } catch (e) {
        throw new Error(`ort-run: could not create a session for ${modelUrl}: ${e?.message ?? e}`);
      }
      const createMs = performance.now() - tCreate;
      ctx.probe.endStep(step, { extra: { phase: 'create', cycle: c, run: null, create_ms: createMs, device: deviceMode } });
      await ctx.probe.checkpoint(step); // --gc-checkpoints: the harness's forced collection, between steps
      step += 1;
      if (c === 0) {
        plan = planInputs(session, npy, dims, dimDefault);
        for (const name of npy.keys()) {
          if (!session.inputNames.includes(name)) throw new Error(`ort-run: --param inputs names ${name}, not an input of the model (inputs: ${session.inputNames.join(', ')})`);
        }
        ctx.log(`ort-run: ${bundle} bundle, ort ${JSON.stringify(ort.env.versions)}, model ${modelUrl}, ` +
                `inputs ${JSON.stringify(plan)}, outputs ${JSON.stringify(session.outputNames)}`);
      }
      // --- runs ---
      for (let r = 0; r < runs; r++) {
        const feeds = feedsFor(ort, plan, npy, fill, frames === 'new' ? seed + r : seed);
        ctx.probe.beginStep(step);
        const t = performance.now();
        let results;
        try {
          results = await session.run(feeds);
        } catch (e) {
          throw new Error(`ort-run: session.run failed at cycle ${c} run ${r}: ${e?.message ?? e}`);
        }
        const { hash, sums } = digest(session, results);
        const now = performance.now();
        for (const t of Object.values(results)) t.dispose?.();
        const extra = { phase: r === 0 ? 'first-run' : 'steady', cycle: c, run: r, run_ms: now - t, ...sums };
        if (r === 0) extra.time_to_first_result_ms = now - tCreate;
        ctx.probe.endStep(step, { token: r, logitsHash: hash, extra });
        cyc.steps.push(step);
        await ctx.probe.checkpoint(step);
        step += 1;
      }
      // --- release ---
      ctx.probe.beginStep(step);
      await session.release();
      if (deviceMode === 'per-session') device.destroy();
      ctx.probe.endStep(step, { extra: { phase: 'release', cycle: c, run: null, device: deviceMode } });
      await ctx.probe.checkpoint(step);
      step += 1;
      await sleep(settleMs);
    }
    shared?.destroy();
    return {
      workload: 'ort-run', model: modelUrl, bundle, variant, ortVersion: ort.env.versions, device: deviceMode,
      sessions, runs, inputs: plan, frames, fill,
      ...(bgCache ? { bindGroupCache: bgCache.stats() } : {}),
    };
  } finally {
    bgCache?.uninstall();
  }
}
