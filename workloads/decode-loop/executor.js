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
//   groups come from BindGroupReuseCache (bind-group-reuse.js), keyed on the layout and the bound buffers.

import { OPS, packUniforms, resolveUniforms, uniformBytes } from './ops.js';

const STORAGE_USAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** Compile one pipeline per op the graph uses (WGSL from ctx.kernelUrl). */
export async function createPipelines(device, graph, kernelUrl) {
  const pipelines = new Map();
  let layoutId = 0;
  for (const op of new Set(graph.nodes.map((n) => n.op))) {
    const url = kernelUrl(OPS[op].kernel);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`fetch ${url}: HTTP ${res.status}`);
    const module = device.createShaderModule({ label: op, code: await res.text() });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) {
      throw new Error(`${OPS[op].kernel}: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
    }
    const pipeline = await device.createComputePipelineAsync({ label: op, layout: 'auto', compute: { module, entryPoint: 'main' } });
    pipelines.set(op, { pipeline, layout: pipeline.getBindGroupLayout(0), layoutId: ++layoutId });
  }
  return pipelines;
}

export class DecodeExecutor {
  /**
   * @param {object} o
   *   device, graph, pipelines (createPipelines), variant ('fresh' | 'reuse'),
   *   storage (BucketBufferCache), uniformCache (SimpleUniformCache), bindGroups (BindGroupReuseCache),
   *   ids (BufferIds), persistent: Map(tensor name -> GPUBuffer) for weights and KV caches,
   *   maxPendingDispatches (16 in the EP)
   */
  constructor(o) {
    Object.assign(this, o);
    if (this.variant !== 'fresh' && this.variant !== 'reuse') throw new Error(`unknown variant '${this.variant}' (have: fresh, reuse)`);
    this.queue = this.device.queue;
    this.encoder = null;
    this.pass = null;
    this.pendingDispatches = 0;
    this.nodeUniforms = this.graph.nodes.map(() => null); // reuse: {buffer, last: Uint32Array}
    this.scratch = new Map(); // op -> ArrayBuffer for packing uniforms
    const { logits, argmax } = this.graph.outputs;
    this.logitsBytes = this.graph.tensors.get(logits).bytes;
    this.argmaxBytes = this.graph.tensors.get(argmax).bytes;
    // One staging buffer for the run (the EP creates one per download; kept here so that
    // createBuffer counts per token stay 0 in both variants).
    this.staging = this.device.createBuffer({
      label: 'readback', size: this.logitsBytes + this.argmaxBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    this.tok = null;
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
    this.storage.refresh();
    this.uniformCache.refresh();
  }

  uniformBuffer(i, node, values) {
    const size = uniformBytes(node.op);
    if (!this.scratch.has(node.op)) this.scratch.set(node.op, new ArrayBuffer(size));
    const bytes = packUniforms(node.op, values, this.scratch.get(node.op));
    if (this.variant === 'fresh') {
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

  /** Encode, submit and read back one token. Resolves to {token, logits, maxLogit, stats}. */
  async runToken({ token, pos }) {
    const tokenInputs = { token, pos, total_len: pos + 1, kv_capacity: this.graph.maxTokens };
    this.tok = { dispatches: 0, bindGroupsCreated: 0, uniformWrites: 0, submits: 0 };
    const created0 = this.storage.stats.created;
    const live = new Map(this.persistent);
    const nodes = this.graph.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      const op = OPS[node.op];
      const pipe = this.pipelines.get(node.op);
      for (const t of node.outputs) {
        const spec = this.graph.tensors.get(t);
        if (spec.kind === 'activation' || spec.kind === 'output') live.set(t, this.storage.acquire(spec.bytes, STORAGE_USAGE(), t));
      }
      const values = resolveUniforms(node, tokenInputs);
      const uniform = this.uniformBuffer(i, node, values);
      const pass = this.computePass();
      const buffers = [];
      for (const t of node.inputs) buffers.push(live.get(t));
      for (const t of node.outputs) buffers.push(live.get(t));
      buffers.push(uniform);
      if (buffers.includes(undefined)) throw new Error(`${node.name}: a bound tensor has no buffer`);
      let bindGroup;
      if (this.variant === 'fresh') {
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
      pass.dispatchWorkgroups(...op.workgroups(values));
      this.tok.dispatches += 1;
      if (this.variant === 'fresh') this.uniformCache.release(uniform);
      this.pendingDispatches += 1;
      if (this.pendingDispatches >= this.maxPendingDispatches) this.flush();
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
    const submitEndMs = performance.now();
    await this.staging.mapAsync(GPUMapMode.READ);
    const mapped = this.staging.getMappedRange();
    const logitsOut = new Float32Array(mapped.slice(0, this.logitsBytes));
    const am = new Uint32Array(mapped.slice(this.logitsBytes, this.logitsBytes + this.argmaxBytes));
    this.staging.unmap();
    live.delete(logits);
    live.delete(argmax);
    if (live.size !== this.persistent.size) throw new Error(`${live.size - this.persistent.size} activation buffers not released at the end of the token`);
    const stats = {
      ...this.tok,
      storageBuffersCreated: this.storage.stats.created - created0,
      submitEndMs,
    };
    return { token: am[0], maxLogit: new Float32Array(am.buffer)[1], logits: logitsOut, stats };
  }

  destroy() {
    for (const own of this.nodeUniforms) own?.buffer.destroy();
    this.staging.destroy();
  }
}
