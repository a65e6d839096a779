// decode-loop: an ORT-style LLM decode loop on raw WebGPU (workloads/README.md contract).
//
// run(ctx) builds the per-token graph (graph.js), uploads seeded weights (weights.js), compiles
// one pipeline per kernel (workloads/kernels/*.wgsl) and decodes ctx.params.tokens tokens
// greedily, one probe step per token, in one or more generate calls (generate.js). See
// executor.js for the dispatch path and the variants, README.md for each parameter's question.

import { BucketBufferCache, BufferIds } from './buffer-cache.js';
import { createPipelines } from './executor.js';
import { injectFault } from './faults.js';
import { GenerateCall } from './generate.js';
import { buildDecodeGraph, graphCounts } from './graph.js';
import { parseOptions } from './options.js';
import { ReferenceModel, top2 } from './reference.js';
import { immediatesSupport, passHasImmediates } from './remedies.js';
import { generateWeights, weightData } from './weights.js';
import { installBindGroupCache, reuseResult, reuseSnapshotSteps } from '../lib/bind-group-cache.js';
import { fnv1a32Hex } from '../lib/hash.js';

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * The session: graph, weights on the GPU (a storage buffer cache of their own: the EP allocates
 * initializers through its buffer manager), pipelines, padding buffers. Everything made goes in
 * `s`; generate calls (generate.js) hold the rest.
 */
async function setup(ctx, o, device, s) {
  s.graph = buildDecodeGraph(o.profile, { graph: o.graph });
  const weights = generateWeights(o.profile, o.seed);
  s.ids = new BufferIds();
  s.weights = new BucketBufferCache(device, { pop: o.bufferCachePop, ids: s.ids });
  s.persistent = new Map();
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  for (const [name, t] of s.graph.tensors) {
    if (t.kind !== 'weight') continue;
    const buffer = s.weights.acquire(t.bytes, usage, name);
    const data = weightData(t, weights);
    if (!data || data.byteLength !== t.bytes) throw new Error(`weight ${name}: ${data?.byteLength} bytes, graph expects ${t.bytes}`);
    device.queue.writeBuffer(buffer, 0, data);
    s.persistent.set(name, buffer);
  }
  if (o.bindingsPerBindGroup) {
    s.padBuffers = {
      storage: device.createBuffer({ label: 'pad.storage', size: 16, usage: GPUBufferUsage.STORAGE }),
      uniform: device.createBuffer({ label: 'pad.uniform', size: 16, usage: GPUBufferUsage.UNIFORM }),
    };
    s.ids.assign(s.padBuffers.storage);
    s.ids.assign(s.padBuffers.uniform);
  }
  s.pipelines = await createPipelines(device, s.graph, ctx.kernelUrl, o.bindingsPerBindGroup, o.variant);
  s.device = device;
  await device.queue.onSubmittedWorkDone();
  // the emulation runs no kernels (web/emulation/): its logits cannot match the reference
  s.reference = o.verify && ctx.webgpu !== 'emulated' ? new ReferenceModel(o.profile, weights) : null;
  if (o.verify && !s.reference) ctx.log('verify=true: not checked on emulated WebGPU (its kernels do not run)');
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

/**
 * One token of the bind-group-cache variant (workloads/lib/bind-group-cache.js behind
 * createBindGroup): its hits, misses (= bind groups created) and evictions from the cache's
 * cumulative stats before and after the token, its size and cap at the token's end.
 */
function libCacheExtra(before, after, window) {
  const hits = after.hits - before.hits;
  const misses = after.misses - before.misses;
  return {
    bind_group_cache_lookups: window.lookups,
    bind_group_cache_distinct_keys: window.distinctKeys,
    bind_group_cache_new_keys: window.coldKeys,
    bind_groups_created: misses,
    bind_group_cache_hits: hits,
    bind_group_cache_misses: misses,
    bind_group_cache_hit_rate: hits + misses ? hits / (hits + misses) : null,
    bind_group_cache_evictions: after.evictions - before.evictions,
    bind_group_cache_size: after.size,
    bind_group_cache_max_entries: after.maxEntries,
  };
}

/** The token loop: one probe step per token; a new generate call every tokensPerCall tokens. */
async function decode(ctx, o, s, gpuErrors) {
  const out = { tokens: [], logitsHashes: [], bindGroupsCreatedPerToken: [], wallMsPerToken: [], maxAbsLogitErr: 0, calls: 0,
    gpuErrors: 0, untrustedTokens: 0, wrongTokens: 0 };
  const keepGoing = o.onGpuError === 'continue';
  const reuseSteps = reuseSnapshotSteps(o.tokens);
  const reuseSnapshots = [];
  s.reuseSnapshots = reuseSnapshots;
  const perCall = o.tokensPerCall || o.tokens;
  let input = o.startToken;
  for (let i = 0; i < o.tokens; i++) {
    const pos = i % perCall;
    if (pos >= o.profile.max_tokens) {
      throw new Error(`KV cache full: token ${i} needs position ${pos}, max_tokens is ${o.profile.max_tokens} (lower tokens_per_call)`);
    }
    if (pos === 0) input = o.startToken;
    const refLogits = s.reference ? s.reference.step(input, pos) : null; // outside the step's timing
    ctx.probe.beginStep(i);
    await injectFault(o.faults, i, s.device);
    if (pos === 0) {
      // a new generate call, inside its first step: the previous call ends, this one allocates
      s.call?.end(o.callEnding, s.leaked);
      s.call = new GenerateCall(s, o, out.calls++);
    }
    const call = s.call;
    const hits0 = call.bindGroups?.stats.hits ?? 0;
    const lib0 = s.bgCache?.stats();
    const errors0 = gpuErrors.length;
    const t0 = performance.now();
    const r = await call.executor.runToken({ token: input, pos });
    const wallMs = performance.now() - t0;
    // continue: let this token's uncapturederror events arrive (each a task after its call) so
    // they count in this step
    if (keepGoing) for (let k = 0; k < 2; k++) await new Promise((resolve) => setTimeout(resolve, 0));
    const logitsHash = fnv1a32Hex(r.logits);
    const extra = {
      dispatches: r.stats.dispatches,
      bind_groups_created: r.stats.bindGroupsCreated,
      bind_group_cache_hits: (call.bindGroups?.stats.hits ?? 0) - hits0,
      bind_group_cache_misses: r.stats.bindGroupsCreated,
      bind_group_cache_size: call.bindGroups?.size ?? call.executor.nodeGroups?.size ?? 0,
      uniform_buffers: call.executor.uniformBufferCount(),
      bindings_min: r.stats.bindingsMin,
      bindings_max: r.stats.bindingsMax,
      uniform_writes: r.stats.uniformWrites,
      submits: r.stats.submits,
      storage_buffers_created: r.stats.storageBuffersCreated,
      storage_buffers_free: call.storage.freeCount(),
      kv_capacity: r.stats.kvCapacity,
      call: call.index,
      encoder_bytes: pos === 0 ? call.encoderBytes : 0,
      input_token: input,
      pos,
    };
    if (s.bgCache) {
      Object.assign(extra, libCacheExtra(lib0, s.bgCache.stats(), s.bgCache.takeWindow()));
      // the working set after token 0 and over the last half of the tokens
      if (reuseSteps.includes(i)) reuseSnapshots.push({ step: i, ...s.bgCache.reuseDistances() });
    }
    const problems = [];
    const jsPick = top2(r.logits);
    if (jsPick.token !== r.token) problems.push(`argmax kernel gave ${r.token}, the logits' first maximum is ${jsPick.token}`);
    if (refLogits) {
      const [fields, refProblems] = checkAgainstReference(r, refLogits, o.verifyTolerance);
      Object.assign(extra, fields);
      problems.push(...refProblems);
      out.maxAbsLogitErr = Math.max(out.maxAbsLogitErr, fields.max_abs_logit_err);
    }
    if (keepGoing) {
      // an application that never checks: the token is emitted whatever happened; count it
      const errors = gpuErrors.length - errors0;
      extra.gpu_errors = errors;
      extra.readback_failed = r.stats.readbackFailed;
      // this token's work raised errors (some of it never ran) or its logits never came back
      extra.output_untrusted = errors > 0 || r.stats.readbackFailed ? 1 : 0;
      extra.wrong_token = refLogits ? Number(extra.ref_token !== r.token) : null;
      out.gpuErrors += errors;
      out.untrustedTokens += extra.output_untrusted;
      out.wrongTokens += extra.wrong_token ?? 0;
      if (errors) extra.first_gpu_error = gpuErrors[errors0].slice(0, 200);
    } else if (gpuErrors.length) {
      problems.push(`WebGPU error: ${gpuErrors.join('; ')}`);
    }
    ctx.probe.endStep(i, { token: r.token, logitsHash, extra });
    if (problems.length && !keepGoing) throw new Error(`decode-loop token ${i}: ${problems.join('; ')}`);
    await ctx.probe.checkpoint(i); // --gc-checkpoints: the harness's forced collection, between tokens
    out.tokens.push(r.token);
    out.logitsHashes.push(logitsHash);
    out.bindGroupsCreatedPerToken.push(extra.bind_groups_created);
    out.wallMsPerToken.push(wallMs);
    input = r.token;
  }
  s.call?.end(o.callEnding, s.leaked);
  s.call = null;
  return out;
}

export async function run(ctx) {
  const o = await parseOptions(ctx.params ?? {});
  const setupT0 = performance.now();
  // The adapter's buffer limits, as onnxruntime's WebGPU EP asks for them
  // (webgpu_context.cc, GetRequiredLimits): a chunk's encoder buffer may be as large as the
  // adapter allows (emulated iOS: 256 MiB, or 1 GiB with limits=ios-2025).
  const { maxBufferSize, maxStorageBufferBindingSize } = ctx.adapter.limits;
  const requiredLimits = { maxBufferSize, maxStorageBufferBindingSize };
  if (o.variant === 'immediates') {
    // a device has no immediates unless it asks for them (maxImmediateSize defaults to 0)
    const support = immediatesSupport(ctx.adapter, globalThis.navigator?.gpu?.wgslLanguageFeatures ?? null);
    if (!support.ok) throw new Error(`SKIP: variant immediates: ${support.reason}`);
    requiredLimits.maxImmediateSize = support.maxImmediateSize;
  }
  const device = await ctx.adapter.requestDevice({ label: 'decode-loop', requiredLimits });
  if (o.variant === 'immediates' && !passHasImmediates(device)) {
    device.destroy();
    throw new Error('SKIP: variant immediates: GPUComputePassEncoder has no setImmediates here');
  }
  const gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push(String(e.error?.message ?? e.error)));
  device.lost.then((info) => { if (info.reason !== 'destroyed') gpuErrors.push(`device lost: ${info.message}`); });
  const s = { leaked: [] };
  try {
    // before anything creates a bind group: every createBindGroup of this cell goes through it
    if (o.variant === 'bind-group-cache') s.bgCache = installBindGroupCache({ maxEntries: o.bindGroupCacheMaxEntries });
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
      calls: out.calls,
      callEnding: o.callEnding,
      kvBuffers: o.kvBuffers,
      bufferCachePop: o.bufferCachePop,
      maxPendingDispatches: o.maxPendingDispatches,
      ...(o.verify ? { maxAbsLogitErr: out.maxAbsLogitErr } : {}),
      ...(s.bgCache ? { bindGroupCache: s.bgCache.stats(), bindGroupCacheReuse: reuseResult(s.reuseSnapshots, s.bgCache) } : {}),
      onGpuError: o.onGpuError,
      ...(o.onGpuError === 'continue'
        ? { gpuErrors: out.gpuErrors, untrustedTokens: out.untrustedTokens, ...(o.verify ? { wrongTokens: out.wrongTokens } : {}) }
        : {}),
    };
  } finally {
    s.call?.end('clean', s.leaked);
    s.weights?.destroyAll();
    device.destroy(); // frees whatever leaked or dropped calls still hold
    s.bgCache?.uninstall();
  }
}
