// decode-loop: an ORT-style LLM decode loop on raw WebGPU (workloads/README.md contract).
//
// run(ctx) builds the per-token graph (graph.js), uploads seeded weights (weights.js), compiles
// one pipeline per kernel (workloads/kernels/*.wgsl) and decodes ctx.params.tokens tokens
// greedily, one probe step per token. See executor.js for the dispatch path and the two variants.

import { BindGroupReuseCache } from './bind-group-reuse.js';
import { BucketBufferCache, BufferIds, SimpleUniformCache } from './buffer-cache.js';
import { DecodeExecutor, createPipelines } from './executor.js';
import { buildDecodeGraph, graphCounts } from './graph.js';
import { ReferenceModel, top2 } from './reference.js';
import { generateWeights, weightData } from './weights.js';
import { fnv1a32Hex } from '../lib/hash.js';


const flag = (v) => v === true || (v !== undefined && v !== null && !['', '0', 'false', 'no', 0, false].includes(v));
const int = (v, dflt) => (v === undefined || v === null || v === '' ? dflt : Number.parseInt(v, 10));

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function resolveProfile(params) {
  if (params.profile && typeof params.profile === 'object') {
    return { profileName: params.profileName ?? 'custom', profile: params.profile };
  }
  const manifest = await (await fetch(new URL('./manifest.json', import.meta.url))).json();
  const profileName = params.profileName ?? (typeof params.profile === 'string' ? params.profile : manifest.default_profile);
  const profile = manifest.profiles[profileName];
  if (!profile) throw new Error(`unknown profile '${profileName}' (have: ${Object.keys(manifest.profiles).join(', ')})`);
  return { profileName, profile };
}

/** Options from ctx.params (manifest `parameters` are the defaults the harness passes). */
async function options(params) {
  const { profileName, profile } = await resolveProfile(params);
  // Variants `fused` / `fused-reuse`: the fused graph (graph-fused.js) on the fresh / reuse
  // dispatch path; `--param graph=fused` selects it for any variant.
  const fusedVariant = { fused: 'fresh', 'fused-reuse': 'reuse' }[params.variant];
  const o = {
    variant: fusedVariant ?? params.variant ?? 'fresh',
    cellVariant: params.variant ?? 'fresh',
    profileName,
    profile,
    graph: fusedVariant ? 'fused' : params.graph ?? 'unfused',
    tokens: int(params.tokens, 16),
    seed: int(params.seed, 1),
    startToken: int(params.start_token, 1),
    verify: flag(params.verify),
    verifyTolerance: Number(params.verify_tolerance ?? 1e-3),
    bufferCachePop: params.buffer_cache_pop ?? 'oldest',
    maxPendingDispatches: int(params.max_pending_dispatches, 16),
  };
  return o;
}

/** Graph, caches, weights on the GPU, pipelines, executor. Everything made goes in `s`. */
async function setup(ctx, o, device, s) {
  s.graph = buildDecodeGraph(o.profile, { graph: o.graph });
  const weights = generateWeights(o.profile, o.seed);
  const ids = new BufferIds();
  s.bindGroups = o.variant === 'reuse' ? new BindGroupReuseCache(device, ids) : null;
  s.storage = new BucketBufferCache(device, { pop: o.bufferCachePop, ids, onDestroy: (b) => s.bindGroups?.dropBuffer(b) });
  s.uniformCache = new SimpleUniformCache(device, { ids });
  // Weights and KV caches come from the storage buffer cache too (the EP allocates
  // initializers through its buffer manager) and are never released.
  const persistent = new Map();
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  for (const [name, t] of s.graph.tensors) {
    if (t.kind !== 'weight' && t.kind !== 'state') continue;
    const buffer = s.storage.acquire(t.bytes, usage, name); // a new buffer is zero-filled (state)
    if (t.kind === 'weight') {
      const data = weightData(t, weights);
      if (!data || data.byteLength !== t.bytes) throw new Error(`weight ${name}: ${data?.byteLength} bytes, graph expects ${t.bytes}`);
      device.queue.writeBuffer(buffer, 0, data);
    }
    persistent.set(name, buffer);
  }
  const pipelines = await createPipelines(device, s.graph, ctx.kernelUrl);
  await device.queue.onSubmittedWorkDone();
  s.reference = o.verify ? new ReferenceModel(o.profile, weights) : null;
  s.executor = new DecodeExecutor({
    device, graph: s.graph, pipelines, variant: o.variant, storage: s.storage, uniformCache: s.uniformCache,
    bindGroups: s.bindGroups, ids, persistent, maxPendingDispatches: o.maxPendingDispatches,
  });
}

/** Compare one token's GPU logits with the CPU reference; returns [extra fields, problems]. */
function checkAgainstReference(gpu, refLogits, tolerance) {
  let err = 0;
  let scale = 1;
  for (let k = 0; k < refLogits.length; k++) {
    err = Math.max(err, Math.abs(gpu.logits[k] - refLogits[k]));
    scale = Math.max(scale, Math.abs(refLogits[k]));
  }
  const ref = top2(refLogits);
  const tol = tolerance * scale;
  const problems = [];
  if (err > tol) problems.push(`max |logit - reference| = ${err} > tolerance ${tol}`);
  if (ref.token !== gpu.token && ref.margin > 2 * tol) {
    problems.push(`GPU token ${gpu.token} != reference token ${ref.token} with top-2 margin ${ref.margin}`);
  }
  return [{ max_abs_logit_err: err, ref_token: ref.token, ref_top2_margin: ref.margin }, problems];
}

/** The token loop: one probe step per token. */
async function decode(ctx, o, s, gpuErrors) {
  const out = { tokens: [], logitsHashes: [], bindGroupsCreatedPerToken: [], wallMsPerToken: [], maxAbsLogitErr: 0 };
  let input = o.startToken;
  for (let i = 0; i < o.tokens; i++) {
    if (i >= o.profile.max_tokens) {
      // the preallocated KV cache (GQA with past_present_share_buffer) has no room for this position
      throw new Error(`KV cache full: token ${i} needs position ${i}, max_tokens is ${o.profile.max_tokens}`);
    }
    const refLogits = s.reference ? s.reference.step(input, i) : null; // outside the step's timing
    const hits0 = s.bindGroups?.stats.hits ?? 0;
    ctx.probe.beginStep(i);
    const t0 = performance.now();
    const r = await s.executor.runToken({ token: input, pos: i });
    const wallMs = performance.now() - t0;
    const logitsHash = fnv1a32Hex(r.logits);
    const extra = {
      dispatches: r.stats.dispatches,
      bind_groups_created: r.stats.bindGroupsCreated,
      bind_group_cache_hits: (s.bindGroups?.stats.hits ?? 0) - hits0,
      bind_group_cache_misses: r.stats.bindGroupsCreated,
      bind_group_cache_size: s.bindGroups?.size ?? 0,
      uniform_writes: r.stats.uniformWrites,
      submits: r.stats.submits,
      storage_buffers_created: r.stats.storageBuffersCreated,
      storage_buffers_free: s.storage.freeCount(),
      input_token: input,
      pos: i,
    };
    const problems = [];
    const jsPick = top2(r.logits);
    if (jsPick.token !== r.token) problems.push(`argmax kernel gave ${r.token}, the logits' first maximum is ${jsPick.token}`);
    if (refLogits) {
      const [fields, refProblems] = checkAgainstReference(r, refLogits, o.verifyTolerance);
      Object.assign(extra, fields);
      problems.push(...refProblems);
      out.maxAbsLogitErr = Math.max(out.maxAbsLogitErr, fields.max_abs_logit_err);
    }
    if (gpuErrors.length) problems.push(`WebGPU error: ${gpuErrors.join('; ')}`);
    ctx.probe.endStep(i, { token: r.token, logitsHash, extra });
    if (problems.length) throw new Error(`decode-loop token ${i}: ${problems.join('; ')}`);
    out.tokens.push(r.token);
    out.logitsHashes.push(logitsHash);
    out.bindGroupsCreatedPerToken.push(r.stats.bindGroupsCreated);
    out.wallMsPerToken.push(wallMs);
    input = r.token;
  }
  return out;
}

export async function run(ctx) {
  const o = await options(ctx.params ?? {});
  const setupT0 = performance.now();
  const device = await ctx.adapter.requestDevice({ label: 'decode-loop' });
  const gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push(String(e.error?.message ?? e.error)));
  device.lost.then((info) => { if (info.reason !== 'destroyed') gpuErrors.push(`device lost: ${info.message}`); });
  const s = {};
  try {
    await setup(ctx, o, device, s);
    const counts = graphCounts(s.graph);
    const setupMs = performance.now() - setupT0;
    ctx.log?.(`decode-loop ${o.variant} ${o.profileName}: ${counts.dispatches_per_token} dispatches/token `
      + `(${counts.dispatches_per_layer}/layer × ${o.profile.layers} + ${counts.outside_layers}), setup ${setupMs.toFixed(0)} ms`);
    const out = await decode(ctx, o, s, gpuErrors);
    return {
      workload: 'decode-loop',
      variant: o.cellVariant,
      bindGroups: o.variant,
      profileName: o.profileName,
      graph: s.graph.name,
      tokens: out.tokens,
      logitsHashes: out.logitsHashes,
      dispatchesPerToken: counts.dispatches_per_token,
      dispatchesPerLayer: counts.dispatches_per_layer,
      dispatchesOutsideLayers: counts.outside_layers,
      bindGroupsCreatedPerToken: out.bindGroupsCreatedPerToken,
      medianMsPerToken: median(out.wallMsPerToken.slice(1)),
      wallMsPerToken: out.wallMsPerToken,
      setupMs,
      bufferCachePop: o.bufferCachePop,
      maxPendingDispatches: o.maxPendingDispatches,
      storageBuffersCreated: s.storage.stats.created,
      uniformBuffersCreated: o.variant === 'fresh' ? s.uniformCache.stats.created : s.graph.nodes.length,
      ...(o.verify ? { maxAbsLogitErr: out.maxAbsLogitErr } : {}),
    };
  } finally {
    s.executor?.destroy();
    s.storage?.destroyAll();
    s.uniformCache?.destroyAll();
    device.destroy();
  }
}
