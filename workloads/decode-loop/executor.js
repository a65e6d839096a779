// The per-token run loop, reproducing the ORT WebGPU EP's dispatch path
// (onnxruntime/core/providers/webgpu/webgpu_context.cc, WebGpuContext::Run and ::Flush;
// shared/references.md, "onnxruntime WebGPU EP internals"):
//   per node: take output buffers from the storage buffer cache; fill a uniform buffer; bind
//   inputs, outputs, then the uniform buffer; SetPipeline, SetBindGroup(0), DispatchWorkgroups in
//   the open compute pass; after 16 dispatches (max_num_pending_dispatches) end the pass, finish,
//   submit and refresh the caches' pending buffers; then release the inputs this node read last.
//   per token: copy logits and the argmax result into one MAP_READ staging buffer, submit, and
//   wait for its mapAsync (as BufferManager::Download does for a CPU output).
//
// variant 'fresh': a uniform buffer from the `simple` uniform cache, written every dispatch and
//   released after it; a new GPUBindGroup every dispatch, its layout from
//   pipeline.getBindGroupLayout(0) (what the EP does).
// variant 'reuse': each node owns its uniform buffer, written only when its bytes change; bind
//   groups come from BindGroupReuseCache (bind-group-reuse.js), keyed on the layout and the bound
//   buffers.
//
// variant 'bind-group-cache': the fresh path, workloads/lib/bind-group-cache.js in front of
//   createBindGroup (main.js). 'dynamic-offset', 'immediates': remedies.js.
//
// Encoding patterns (manifest.json parameters): dispatchesPerPass (0: one pass per command
// buffer, as ORT; n: a new compute pass every n dispatches), maxInFlight (0: no cap; n: after a
// submit, wait on onSubmittedWorkDone until fewer than n command buffers are in flight),
// uniformBuffers 'per-dispatch' (a new uniform buffer created for every dispatch and destroyed
// after its submit), padding (kernel-padding.js), storageBufferMinBytes (every storage request
// at least this big).
//
// KV cache and readback buffers (kvBuffers): 'preallocated' — one buffer per KV cache of the
// profile's max_tokens positions from the storage cache, and one staging buffer, for the whole
// generate call; 'recreate-destroy' / 'recreate-drop' — every token a new buffer per KV cache with
// room for exactly pos + 1 positions (the previous positions copied in with copyBufferToBuffer,
// one copy per KV head) and a new staging buffer; the previous ones destroyed, or dropped without
// destroy() (left to the garbage collector).

import { OPS, packUniforms, resolveUniforms, uniformBytes } from './ops.js';
import { padKernel, paddingBuffers, paddingFor } from './kernel-padding.js';
import { VARIANTS } from './options.js';
import { NodeBindGroups, SharedUniforms, dynamicOffsetLayoutEntries, immediatesKernel } from './remedies.js';

const STORAGE_USAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/**
 * Compile one pipeline per op the graph uses (WGSL from ctx.kernelUrl). With bindingsPerBindGroup
 * > 0 each kernel is padded to that many bindings (kernel-padding.js). `variant` 'immediates'
 * moves each kernel's uniform block to the immediate address space; 'dynamic-offset' gives each
 * pipeline an explicit layout with a dynamic-offset uniform binding (remedies.js); the others use
 * 'auto' layouts. Resolves to Map(op -> {pipeline, layout, layoutId, pad}).
 */
export async function createPipelines(device, graph, kernelUrl, bindingsPerBindGroup = 0, variant = 'fresh') {
  const pipelines = new Map();
  let layoutId = 0;
  for (const op of new Set(graph.nodes.map((n) => n.op))) {
    const url = kernelUrl(OPS[op].kernel);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`fetch ${url}: HTTP ${res.status}`);
    const pad = paddingFor(op, bindingsPerBindGroup, device.limits);
    let code = await res.text();
    if (variant === 'immediates') code = immediatesKernel(code);
    code = padKernel(code, pad);
    const module = device.createShaderModule({ label: op, code });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) {
      const what = `${OPS[op].kernel}${variant === 'immediates' ? ' (uniforms moved to var<immediate>)' : ''}`;
      const message = `${what}: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`;
      throw new Error(variant === 'immediates' ? `SKIP: immediates: ${message}` : message);
    }
    let layout = 'auto';
    if (variant === 'dynamic-offset') {
      const bindGroupLayout = device.createBindGroupLayout({ label: `${op}.dynamic`, entries: dynamicOffsetLayoutEntries(code) });
      layout = device.createPipelineLayout({ label: op, bindGroupLayouts: [bindGroupLayout] });
    }
    const pipeline = await device.createComputePipelineAsync({ label: op, layout, compute: { module, entryPoint: 'main' } });
    pipelines.set(op, { pipeline, layout: pipeline.getBindGroupLayout(0), layoutId: ++layoutId, pad });
  }
  return pipelines;
}

export class DecodeExecutor {
  /**
   * @param {object} o
   *   device, graph, pipelines (createPipelines), variant ('fresh' | 'reuse'),
   *   storage (BucketBufferCache), uniformCache (SimpleUniformCache), bindGroups (BindGroupReuseCache),
   *   ids (BufferIds), persistent: Map(tensor name -> GPUBuffer) for the weights,
   *   maxPendingDispatches (16 in the EP), dispatchesPerPass, maxInFlight, uniformBuffers
   *   ('cache' | 'per-dispatch'), padBuffers ({storage, uniform} 16-byte buffers),
   *   storageBufferMinBytes, kvBuffers ('preallocated' | 'recreate-destroy' | 'recreate-drop'),
   *   keepGoing (on_gpu_error=continue: a failed readback gives zeros instead of throwing)
   */
  constructor(o) {
    Object.assign(this, { dispatchesPerPass: 0, maxInFlight: 0, uniformBuffers: 'cache', storageBufferMinBytes: 0, kvBuffers: 'preallocated',
      keepGoing: false, ...o });
    if (!VARIANTS.includes(this.variant)) throw new Error(`unknown variant '${this.variant}' (have: ${VARIANTS.join(', ')})`);
    // the dispatch path: bind-group-cache is fresh's, the cache sits behind createBindGroup
    this.path = this.variant === 'bind-group-cache' ? 'fresh' : this.variant;
    const perNode = this.path === 'dynamic-offset' || this.path === 'immediates';
    this.nodeGroups = perNode ? new NodeBindGroups(this.device, this.ids, this.graph.nodes.length) : null;
    this.shared = this.path === 'dynamic-offset'
      ? new SharedUniforms(this.device, this.graph.nodes.length, this.device.limits.minUniformBufferOffsetAlignment, this.ids)
      : null;
    this.queue = this.device.queue;
    this.encoder = null;
    this.pass = null;
    this.pendingDispatches = 0;
    this.passDispatches = 0;
    this.inFlight = []; // onSubmittedWorkDone promises, oldest first (maxInFlight > 0)
    this.perDispatchUniforms = []; // uniformBuffers 'per-dispatch': destroyed after their submit
    this.nodeUniforms = this.graph.nodes.map(() => null); // reuse: {buffer, last: Uint32Array}
    this.scratch = new Map(); // op -> ArrayBuffer for packing uniforms
    const { logits, argmax } = this.graph.outputs;
    this.logitsBytes = this.graph.tensors.get(logits).bytes;
    this.argmaxBytes = this.graph.tensors.get(argmax).bytes;
    this.recreate = this.kvBuffers !== 'preallocated';
    // KV caches: name -> {buffer, capacity (positions), spec}
    this.kv = new Map();
    for (const [name, t] of this.graph.tensors) {
      if (t.kind !== 'state') continue;
      const buffer = this.recreate ? null : this.storage.acquire(this.storageBytes(t.bytes), STORAGE_USAGE(), name);
      this.kv.set(name, { buffer, capacity: this.recreate ? 0 : this.graph.maxTokens, spec: t });
    }
    // One staging buffer for the generate call (the EP creates one per download; kept here so
    // that createBuffer counts per token stay 0 in both variants), or one per token (recreate).
    this.staging = this.recreate ? null : this.newStaging();
    this.retired = []; // buffers replaced this token (recreate): destroyed or dropped at its end
    this.tok = null;
  }

  storageBytes(bytes) {
    return Math.max(bytes, this.storageBufferMinBytes);
  }

  newStaging() {
    const buffer = this.device.createBuffer({
      label: 'readback', size: this.logitsBytes + this.argmaxBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    this.ids.assign(buffer);
    return buffer;
  }

  /** Every buffer this executor created and still references (for a generate call's ending). */
  ownedBuffers() {
    const out = [];
    for (const own of this.nodeUniforms) if (own) out.push(own.buffer);
    if (this.shared) out.push(this.shared.buffer);
    if (this.staging) out.push(this.staging);
    if (this.recreate) for (const kv of this.kv.values()) if (kv.buffer) out.push(kv.buffer);
    return out;
  }

  computePass() {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    if (!this.pass) this.pass = this.encoder.beginComputePass();
    return this.pass;
  }

  endPass() {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
      this.passDispatches = 0;
    }
  }

  /** End pass, finish, submit, then move pending buffers back to the free lists. */
  flush() {
    if (!this.encoder) return;
    this.endPass();
    this.queue.submit([this.encoder.finish()]);
    this.encoder = null;
    this.pendingDispatches = 0;
    this.tok.submits += 1;
    if (this.maxInFlight > 0) this.inFlight.push(this.queue.onSubmittedWorkDone());
    this.storage.refresh();
    this.uniformCache.refresh();
    for (const b of this.perDispatchUniforms) {
      this.bindGroups?.dropBuffer(b);
      b.destroy();
    }
    this.perDispatchUniforms.length = 0;
  }

  /** maxInFlight > 0: wait until fewer than maxInFlight submitted command buffers are running. */
  async throttle() {
    while (this.maxInFlight > 0 && this.inFlight.length >= this.maxInFlight) await this.inFlight.shift();
  }

  uniformBuffer(i, node, values) {
    const size = uniformBytes(node.op);
    if (!this.scratch.has(node.op)) this.scratch.set(node.op, new ArrayBuffer(size));
    const bytes = packUniforms(node.op, values, this.scratch.get(node.op));
    if (this.uniformBuffers === 'per-dispatch') {
      const buffer = this.device.createBuffer({ label: `${node.name}.uniforms`, size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.ids.assign(buffer);
      this.queue.writeBuffer(buffer, 0, bytes);
      this.tok.uniformWrites += 1;
      this.perDispatchUniforms.push(buffer);
      return buffer;
    }
    if (this.path === 'fresh') {
      const buffer = this.uniformCache.acquire(size);
      this.queue.writeBuffer(buffer, 0, bytes);
      this.tok.uniformWrites += 1;
      return buffer;
    }
    let own = this.nodeUniforms[i];
    if (!own) {
      own = { buffer: this.device.createBuffer({ label: `${node.name}.uniforms`, size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST }), last: null };
      this.ids.assign(own.buffer);
      this.nodeUniforms[i] = own;
    }
    const words = new Uint32Array(bytes);
    if (!own.last || words.some((w, k) => w !== own.last[k])) {
      this.queue.writeBuffer(own.buffer, 0, bytes);
      own.last = words.slice();
      this.tok.uniformWrites += 1;
    }
    return own.buffer;
  }

  /** recreate: new KV buffers with room for pos + 1 positions, old positions copied in. */
  recreateKv(pos) {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    for (const [name, kv] of this.kv) {
      const { heads, headDim, bytesPerPosition } = kv.spec.kv;
      const capacity = pos + 1;
      const buffer = this.device.createBuffer({ label: `${name}@${capacity}`, size: this.storageBytes(bytesPerPosition * capacity), usage: STORAGE_USAGE() });
      this.ids.assign(buffer);
      if (kv.buffer) {
        const rowBytes = headDim * 4; // one position of one head
        for (let h = 0; h < heads; h++) {
          this.encoder.copyBufferToBuffer(kv.buffer, h * kv.capacity * rowBytes, buffer, h * capacity * rowBytes, pos * rowBytes);
        }
        this.retired.push(kv.buffer);
      }
      kv.buffer = buffer;
      kv.capacity = capacity;
    }
    if (this.staging) this.retired.push(this.staging);
    this.staging = this.newStaging();
  }

  /** Destroy (recreate-destroy) or drop (recreate-drop) the buffers replaced this token. */
  retire() {
    for (const b of this.retired) {
      this.bindGroups?.dropBuffer(b);
      if (this.kvBuffers === 'recreate-destroy') b.destroy();
    }
    this.retired.length = 0;
  }

  /** Uniform buffers held: the cache's (fresh), one per node (reuse), 1 (dynamic-offset), 0 (immediates), + per-dispatch ones. */
  uniformBufferCount() {
    const own = this.path === 'fresh' ? this.uniformCache.all.size : this.path === 'reuse' ? this.nodeUniforms.filter(Boolean).length
      : this.path === 'dynamic-offset' ? 1 : 0;
    return own + this.perDispatchUniforms.length;
  }

  /**
   * The remedies' dispatch (remedies.js): node i's bind group (per node, reused), and its
   * parameters written into its slot of the shared uniform buffer (dynamic-offset) or set with
   * setImmediates (immediates). `storage` = the node's storage buffers in binding order, then
   * its padding buffers.
   */
  dispatchRemedy(i, node, pipe, pass, values, storage) {
    const size = uniformBytes(node.op);
    if (!this.scratch.has(node.op)) this.scratch.set(node.op, new ArrayBuffer(size));
    const bytes = packUniforms(node.op, values, this.scratch.get(node.op));
    const own = OPS[node.op].inputs + OPS[node.op].outputs; // padding bindings follow the uniform's number
    const entries = storage.map((buffer, k) => ({ binding: k < own ? k : k + 1, buffer }));
    if (this.shared) entries.push({ binding: own, buffer: this.shared.buffer, size });
    const created = this.nodeGroups.created;
    const group = this.nodeGroups.get(i, pipe.layout, entries, node.name);
    this.tok.bindGroupsCreated += this.nodeGroups.created - created;
    this.tok.bindingsMin = Math.min(this.tok.bindingsMin, entries.length);
    this.tok.bindingsMax = Math.max(this.tok.bindingsMax, entries.length);
    pass.setPipeline(pipe.pipeline);
    if (this.shared) {
      if (this.shared.write(i, bytes)) this.tok.uniformWrites += 1;
      pass.setBindGroup(0, group, [this.shared.offset(i)]);
    } else {
      pass.setBindGroup(0, group);
      pass.setImmediates(0, new Uint32Array(bytes, 0, OPS[node.op].uniforms.length));
    }
  }

  /** Encode, submit and read back one token. Resolves to {token, logits, maxLogit, stats}. */
  async runToken({ token, pos }) {
    this.tok = { dispatches: 0, bindGroupsCreated: 0, uniformWrites: 0, submits: 0, bindingsMin: Infinity, bindingsMax: 0, readbackFailed: 0 };
    if (this.recreate) this.recreateKv(pos);
    const capacity = this.kv.values().next().value?.capacity ?? this.graph.maxTokens;
    if (pos >= capacity) throw new Error(`KV cache full: position ${pos}, capacity ${capacity} (profile max_tokens)`);
    const tokenInputs = { token, pos, total_len: pos + 1, kv_capacity: capacity };
    const created0 = this.storage.stats.created;
    const live = new Map(this.persistent);
    for (const [name, kv] of this.kv) live.set(name, kv.buffer);
    const fixed = live.size;
    const nodes = this.graph.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      const op = OPS[node.op];
      const pipe = this.pipelines.get(node.op);
      for (const t of node.outputs) {
        const spec = this.graph.tensors.get(t);
        if (spec.kind === 'activation' || spec.kind === 'output') live.set(t, this.storage.acquire(this.storageBytes(spec.bytes), STORAGE_USAGE(), t));
      }
      const values = resolveUniforms(node, tokenInputs);
      const remedy = this.nodeGroups !== null;
      const uniform = remedy ? null : this.uniformBuffer(i, node, values);
      const pass = this.computePass();
      const buffers = [];
      for (const t of node.inputs) buffers.push(live.get(t));
      for (const t of node.outputs) buffers.push(live.get(t));
      if (!remedy) buffers.push(uniform);
      if (pipe.pad) buffers.push(...paddingBuffers(pipe.pad, this.padBuffers));
      if (buffers.includes(undefined)) throw new Error(`${node.name}: a bound tensor has no buffer`);
      if (remedy) {
        this.dispatchRemedy(i, node, pipe, pass, values, buffers);
      } else {
        this.tok.bindingsMin = Math.min(this.tok.bindingsMin, buffers.length);
        this.tok.bindingsMax = Math.max(this.tok.bindingsMax, buffers.length);
        let bindGroup;
        if (this.path === 'fresh') {
          bindGroup = this.device.createBindGroup({
            label: node.name,
            layout: pipe.pipeline.getBindGroupLayout(0),
            entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
          });
          this.tok.bindGroupsCreated += 1;
        } else {
          const misses = this.bindGroups.stats.misses;
          bindGroup = this.bindGroups.get(pipe.layout, pipe.layoutId, buffers, node.name);
          this.tok.bindGroupsCreated += this.bindGroups.stats.misses - misses;
        }
        pass.setPipeline(pipe.pipeline);
        pass.setBindGroup(0, bindGroup);
      }
      pass.dispatchWorkgroups(...op.workgroups(values));
      this.tok.dispatches += 1;
      if (this.path === 'fresh' && this.uniformBuffers === 'cache') this.uniformCache.release(uniform);
      this.pendingDispatches += 1;
      this.passDispatches += 1;
      if (this.pendingDispatches >= this.maxPendingDispatches) {
        this.flush();
        await this.throttle();
      } else if (this.dispatchesPerPass > 0 && this.passDispatches >= this.dispatchesPerPass) {
        this.endPass();
      }
      for (const t of node.releases) {
        this.storage.release(live.get(t));
        live.delete(t);
      }
    }

    // Readback (BufferManager::Download): end the pass, copy, flush, map.
    const { logits, argmax } = this.graph.outputs;
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    this.endPass();
    this.encoder.copyBufferToBuffer(live.get(logits), 0, this.staging, 0, this.logitsBytes);
    this.encoder.copyBufferToBuffer(live.get(argmax), 0, this.staging, this.logitsBytes, this.argmaxBytes);
    // The outputs are released once their copies are encoded, so this flush returns them to the
    // free lists and every token starts with all of its buffers free. (ORT frees a CPU output's
    // GPU buffer after the download, so it sits pending until the next token's first submit; a
    // node of that token could then get a different buffer than on the token before.)
    this.storage.release(live.get(logits));
    this.storage.release(live.get(argmax));
    this.flush();
    this.retire(); // after the submit that copied from them
    const submitEndMs = performance.now();
    let mapped = null;
    try {
      await this.staging.mapAsync(GPUMapMode.READ);
      mapped = this.staging.getMappedRange();
    } catch (e) {
      // on_gpu_error=continue: an application that keeps going reads whatever it got (nothing)
      if (!this.keepGoing) throw e;
      this.tok.readbackFailed = 1;
    }
    this.inFlight.length = 0; // the readback waited for all of the token's work
    const logitsOut = mapped ? new Float32Array(mapped.slice(0, this.logitsBytes)) : new Float32Array(this.logitsBytes / 4);
    const am = mapped ? new Uint32Array(mapped.slice(this.logitsBytes, this.logitsBytes + this.argmaxBytes)) : new Uint32Array(this.argmaxBytes / 4);
    if (mapped) this.staging.unmap();
    live.delete(logits);
    live.delete(argmax);
    if (live.size !== fixed) throw new Error(`${live.size - fixed} activation buffers not released at the end of the token`);
    const stats = {
      ...this.tok,
      kvCapacity: capacity,
      storageBuffersCreated: this.storage.stats.created - created0,
      submitEndMs,
    };
    return { token: am[0], maxLogit: new Float32Array(am.buffer)[1], logits: logitsOut, stats };
  }

  /** Destroy every buffer this executor owns (the storage and uniform caches destroy theirs). */
  destroy() {
    for (const b of this.ownedBuffers()) b.destroy();
    for (const b of this.perDispatchUniforms) b.destroy();
  }
}
