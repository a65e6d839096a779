var WebGPUHarnessInject = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // web/inject/bootstrap.js
  var bootstrap_exports = {};
  __export(bootstrap_exports, {
    CONTROL_CHANNEL: () => CONTROL_CHANNEL,
    GLOBAL_KEY: () => GLOBAL_KEY,
    MAX_APP_ERRORS: () => MAX_APP_ERRORS,
    OPEN_STEP_MS: () => OPEN_STEP_MS,
    SNAPSHOT_MIN_MS: () => SNAPSHOT_MIN_MS,
    install: () => install
  });

  // web/probes/catalog.js
  var COUNTERS = (
    /* catalog:counters */
    [
      { "name": "createBindGroup", "column": "create_bind_group", "unit": "calls", "metric": "bind_groups_per_token", "what": "GPUDevice.createBindGroup calls" },
      { "name": "createBuffer", "column": "create_buffer", "unit": "calls", "metric": "buffers_created_per_token", "what": "GPUDevice.createBuffer calls" },
      { "name": "createComputePipeline", "column": "create_compute_pipeline", "unit": "calls", "metric": null, "what": "GPUDevice.createComputePipeline calls" },
      { "name": "createComputePipelineAsync", "column": "create_compute_pipeline_async", "unit": "calls", "metric": null, "what": "GPUDevice.createComputePipelineAsync calls" },
      { "name": "createShaderModule", "column": "create_shader_module", "unit": "calls", "metric": null, "what": "GPUDevice.createShaderModule calls" },
      { "name": "createCommandEncoder", "column": "create_command_encoder", "unit": "calls", "metric": null, "what": "GPUDevice.createCommandEncoder calls" },
      { "name": "submit", "column": "submit", "unit": "calls", "metric": "submits_per_token", "what": "GPUQueue.submit calls" },
      { "name": "commandBuffersSubmitted", "column": "command_buffers_submitted", "unit": "command buffers", "metric": null, "what": "command buffers passed to GPUQueue.submit" },
      { "name": "writeBuffer", "column": "write_buffer", "unit": "calls", "metric": "write_buffers_per_token", "what": "GPUQueue.writeBuffer calls" },
      { "name": "writeBufferBytes", "column": "write_buffer_bytes", "unit": "bytes", "metric": "write_buffer_bytes_per_token", "what": "bytes written by GPUQueue.writeBuffer" },
      { "name": "dispatchWorkgroups", "column": "dispatch_workgroups", "unit": "calls", "metric": "dispatches_per_token", "what": "GPUComputePassEncoder.dispatchWorkgroups calls" },
      { "name": "dispatchWorkgroupsIndirect", "column": "dispatch_workgroups_indirect", "unit": "calls", "metric": null, "what": "GPUComputePassEncoder.dispatchWorkgroupsIndirect calls" },
      { "name": "mapAsync", "column": "map_async", "unit": "calls", "metric": null, "what": "GPUBuffer.mapAsync calls" },
      { "name": "bufferDestroy", "column": "buffer_destroy", "unit": "calls", "metric": null, "what": "GPUBuffer.destroy calls" },
      { "name": "beginComputePass", "column": "begin_compute_pass", "unit": "calls", "metric": "compute_passes_per_token", "what": "GPUCommandEncoder.beginComputePass calls" },
      { "name": "copyBufferToBuffer", "column": "copy_buffer_to_buffer", "unit": "calls", "metric": null, "what": "GPUCommandEncoder.copyBufferToBuffer calls" },
      { "name": "onSubmittedWorkDone", "column": "on_submitted_work_done", "unit": "calls", "metric": null, "what": "GPUQueue.onSubmittedWorkDone calls" },
      { "name": "createBufferBytes", "column": "create_buffer_bytes", "unit": "bytes", "metric": "create_buffer_bytes_per_token", "what": "bytes asked of GPUDevice.createBuffer (descriptor.size; creations that then fail validation included)" },
      { "name": "setBindGroup", "column": "set_bind_group", "unit": "calls", "metric": null, "what": "setBindGroup calls on compute passes, render passes and render bundle encoders" },
      { "name": "setBindGroupDynamicOffsets", "column": "set_bind_group_dynamic_offsets", "unit": "calls", "metric": null, "what": "setBindGroup calls that pass at least one dynamic offset" },
      { "name": "setImmediates", "column": "set_immediates", "unit": "calls", "metric": null, "what": "setImmediates calls on compute passes, render passes and render bundle encoders" },
      { "name": "setImmediatesBytes", "column": "set_immediates_bytes", "unit": "bytes", "metric": null, "what": "bytes passed to setImmediates" },
      { "name": "createBufferBytesMapRead", "column": "create_buffer_bytes_map_read", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has MAP_READ (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesMapWrite", "column": "create_buffer_bytes_map_write", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has MAP_WRITE (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesCopySrc", "column": "create_buffer_bytes_copy_src", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has COPY_SRC (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesCopyDst", "column": "create_buffer_bytes_copy_dst", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has COPY_DST (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesIndex", "column": "create_buffer_bytes_index", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has INDEX (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesVertex", "column": "create_buffer_bytes_vertex", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has VERTEX (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesUniform", "column": "create_buffer_bytes_uniform", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has UNIFORM (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesStorage", "column": "create_buffer_bytes_storage", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has STORAGE (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesIndirect", "column": "create_buffer_bytes_indirect", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has INDIRECT (a buffer counts under each of its usage flags)" },
      { "name": "createBufferBytesQueryResolve", "column": "create_buffer_bytes_query_resolve", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has QUERY_RESOLVE (a buffer counts under each of its usage flags)" },
      { "name": "beginRenderPass", "column": "begin_render_pass", "unit": "calls", "metric": null, "what": "GPUCommandEncoder.beginRenderPass calls" },
      { "name": "draw", "column": "draw", "unit": "calls", "metric": null, "what": "draw calls on render passes and render bundle encoders" },
      { "name": "drawIndexed", "column": "draw_indexed", "unit": "calls", "metric": null, "what": "drawIndexed calls on render passes and render bundle encoders" },
      { "name": "drawIndirect", "column": "draw_indirect", "unit": "calls", "metric": null, "what": "drawIndirect calls on render passes and render bundle encoders" },
      { "name": "drawIndexedIndirect", "column": "draw_indexed_indirect", "unit": "calls", "metric": null, "what": "drawIndexedIndirect calls on render passes and render bundle encoders" },
      { "name": "createRenderPipeline", "column": "create_render_pipeline", "unit": "calls", "metric": null, "what": "GPUDevice.createRenderPipeline calls" },
      { "name": "createRenderPipelineAsync", "column": "create_render_pipeline_async", "unit": "calls", "metric": null, "what": "GPUDevice.createRenderPipelineAsync calls" },
      { "name": "uncapturedErrors", "column": "uncaptured_errors", "unit": "errors", "metric": null, "what": "uncapturederror events of the realm's GPUDevices (errors no error scope caught), counted when delivered" },
      { "name": "uncapturedOutOfMemoryErrors", "column": "uncaptured_out_of_memory_errors", "unit": "errors", "metric": null, "what": "of those, GPUOutOfMemoryError" },
      { "name": "uncapturedValidationErrors", "column": "uncaptured_validation_errors", "unit": "errors", "metric": null, "what": "of those, GPUValidationError" }
    ]
  );
  var LIVE = (
    /* catalog:live */
    [
      { "name": "bind_groups_created", "unit": "bind groups", "what": "GPUBindGroup wrappers created so far" },
      { "name": "bind_groups_collected", "unit": "bind groups", "what": "GPUBindGroup wrappers the GC collected so far" },
      { "name": "bind_groups_live", "unit": "bind groups", "what": "created − collected" },
      { "name": "buffers_created", "unit": "buffers", "what": "GPUBuffer wrappers created so far" },
      { "name": "buffers_collected", "unit": "buffers", "what": "GPUBuffer wrappers the GC collected so far" },
      { "name": "buffers_live", "unit": "buffers", "what": "created − collected" },
      { "name": "buffer_bytes_created", "unit": "bytes", "what": "createBuffer sizes so far", "optional": true },
      { "name": "buffer_bytes_destroyed", "unit": "bytes", "what": "bytes of buffers destroyed (destroy(), or their device destroyed or lost)", "optional": true },
      { "name": "buffer_bytes_collected", "unit": "bytes", "what": "bytes of buffers the GC collected before they were destroyed", "optional": true },
      { "name": "buffer_bytes_live", "unit": "bytes", "what": "created − destroyed − collected", "optional": true, "signed": true },
      { "name": "buffers_destroyed", "unit": "buffers", "what": "GPUBuffers destroyed so far (destroy(), or their device destroyed or lost)", "optional": true },
      { "name": "buffers_not_destroyed", "unit": "buffers", "what": "created − destroyed − collected before being destroyed: buffers still holding their memory", "optional": true, "signed": true }
    ]
  );
  var COUNTER_NAMES = COUNTERS.map((c) => c.name);
  var LIVE_KEYS = LIVE.map((l) => l.name);

  // web/probes/counters.js
  var counts = Object.fromEntries(COUNTER_NAMES.map((n) => [n, 0]));
  var timing = { lastSubmitEndMs: null };
  var hooks = { createBindGroup: [], createBuffer: [], bufferDestroy: [], deviceDestroy: [] };
  var anyCall = null;
  function onAnyCall(fn) {
    anyCall = fn;
  }
  var USAGE_COUNTERS = [
    [1, "createBufferBytesMapRead"],
    [2, "createBufferBytesMapWrite"],
    [4, "createBufferBytesCopySrc"],
    [8, "createBufferBytesCopyDst"],
    [16, "createBufferBytesIndex"],
    [32, "createBufferBytesVertex"],
    [64, "createBufferBytesUniform"],
    [128, "createBufferBytesStorage"],
    [256, "createBufferBytesIndirect"],
    [512, "createBufferBytesQueryResolve"]
  ];
  var MAX_BUFFER_GROUPS = 32;
  var MAX_LABEL_CHARS = 100;
  var createdBuffers = /* @__PURE__ */ new Map();
  function recordCreatedBuffer(descriptor) {
    const size = Number(descriptor?.size ?? 0) || 0;
    const usage = Number(descriptor?.usage ?? 0) >>> 0;
    for (const [flag, name] of USAGE_COUNTERS) if (usage & flag) counts[name] += size;
    const label = String(descriptor?.label ?? "").slice(0, MAX_LABEL_CHARS);
    const key = `${usage}|${label}`;
    let g = createdBuffers.get(key);
    if (!g) {
      if (createdBuffers.size > 4 * MAX_BUFFER_GROUPS) {
        g = createdBuffers.get("0|(other)") ?? { label: "(other)", usage: 0, buffers: 0, bytes: 0 };
        createdBuffers.set("0|(other)", g);
      } else {
        g = { label, usage, buffers: 0, bytes: 0 };
        createdBuffers.set(key, g);
      }
    }
    g.buffers += 1;
    g.bytes += size;
  }
  function takeCreatedBuffers() {
    const groups = [...createdBuffers.values()].sort((a, b) => b.bytes - a.bytes || b.buffers - a.buffers);
    createdBuffers = /* @__PURE__ */ new Map();
    if (groups.length <= MAX_BUFFER_GROUPS) return groups;
    const kept = groups.filter((g) => g.label !== "(other)" || g.usage !== 0).slice(0, MAX_BUFFER_GROUPS - 1);
    const other = { label: "(other)", usage: 0, buffers: 0, bytes: 0 };
    for (const g of groups) {
      if (kept.includes(g)) continue;
      other.buffers += g.buffers;
      other.bytes += g.bytes;
    }
    return [...kept, other];
  }
  function onCreate(kind, fn) {
    hooks[kind].push(fn);
  }
  var runHooks = (kind) => (result, args, self) => {
    for (const f of hooks[kind]) f(result, args, self);
  };
  function wrap(proto, method, counter, after) {
    if (!proto || typeof proto[method] !== "function") return false;
    const original = proto[method];
    if (original.__harnessWrapped) return true;
    const wrapped = function(...args) {
      if (counter) counts[counter] += 1;
      const result = original.apply(this, args);
      if (after) after(result, args, this);
      if (anyCall !== null) anyCall();
      return result;
    };
    wrapped.__harnessWrapped = true;
    wrapped.__harnessOriginal = original;
    Object.defineProperty(proto, method, { value: wrapped, writable: true, configurable: true });
    return true;
  }
  function byteLengthOf(data, dataOffset, size) {
    const elem = ArrayBuffer.isView(data) && !(data instanceof DataView) ? data.BYTES_PER_ELEMENT : 1;
    const total = ArrayBuffer.isView(data) ? data.byteLength : data.byteLength ?? 0;
    if (size !== void 0) return size * elem;
    return total - (dataOffset ?? 0) * elem;
  }
  function installCounters(scope = globalThis) {
    const perf = scope.performance ?? performance;
    const installed = [];
    const add = (iface, method, counter, after) => {
      if (wrap(scope[iface]?.prototype, method, counter, after)) installed.push(`${iface}.${method}`);
    };
    add("GPUDevice", "createBindGroup", "createBindGroup", runHooks("createBindGroup"));
    const createBufferHooks = runHooks("createBuffer");
    add("GPUDevice", "createBuffer", "createBuffer", (buf, args, device) => {
      counts.createBufferBytes += Number(args[0]?.size ?? 0) || 0;
      recordCreatedBuffer(args[0]);
      createBufferHooks(buf, args, device);
    });
    add("GPUDevice", "createComputePipeline", "createComputePipeline");
    add("GPUDevice", "createComputePipelineAsync", "createComputePipelineAsync");
    add("GPUDevice", "createRenderPipeline", "createRenderPipeline");
    add("GPUDevice", "createRenderPipelineAsync", "createRenderPipelineAsync");
    add("GPUDevice", "createShaderModule", "createShaderModule");
    add("GPUDevice", "createCommandEncoder", "createCommandEncoder");
    add("GPUComputePassEncoder", "dispatchWorkgroups", "dispatchWorkgroups");
    add("GPUComputePassEncoder", "dispatchWorkgroupsIndirect", "dispatchWorkgroupsIndirect");
    add("GPUBuffer", "mapAsync", "mapAsync");
    add("GPUBuffer", "destroy", "bufferDestroy", runHooks("bufferDestroy"));
    add("GPUDevice", "destroy", null, runHooks("deviceDestroy"));
    add("GPUCommandEncoder", "beginComputePass", "beginComputePass");
    add("GPUCommandEncoder", "beginRenderPass", "beginRenderPass");
    const dynamicOffsets = (_r, args) => {
      const n = args.length >= 5 ? Number(args[4]) : args[2]?.length ?? 0;
      if (n > 0) counts.setBindGroupDynamicOffsets += 1;
    };
    const immediateBytes = (_r, args) => {
      counts.setImmediatesBytes += byteLengthOf(args[1], args[2], args[3]);
    };
    for (const iface of ["GPUComputePassEncoder", "GPURenderPassEncoder", "GPURenderBundleEncoder"]) {
      add(iface, "setBindGroup", "setBindGroup", dynamicOffsets);
      add(iface, "setImmediates", "setImmediates", immediateBytes);
    }
    for (const iface of ["GPURenderPassEncoder", "GPURenderBundleEncoder"]) {
      for (const method of ["draw", "drawIndexed", "drawIndirect", "drawIndexedIndirect"]) add(iface, method, method);
    }
    add("GPUCommandEncoder", "copyBufferToBuffer", "copyBufferToBuffer");
    add("GPUQueue", "onSubmittedWorkDone", "onSubmittedWorkDone");
    const errorClass = (name) => typeof scope[name] === "function" ? scope[name] : null;
    add("GPUAdapter", "requestDevice", null, (promise) => {
      Promise.resolve(promise).then((device) => {
        device?.addEventListener?.("uncapturederror", (e) => {
          counts.uncapturedErrors += 1;
          const err = e.error;
          const is = (name) => {
            const C = errorClass(name);
            return C ? err instanceof C : err?.constructor?.name === name;
          };
          if (is("GPUOutOfMemoryError")) counts.uncapturedOutOfMemoryErrors += 1;
          else if (is("GPUValidationError")) counts.uncapturedValidationErrors += 1;
        });
      }, () => {
      });
    });
    add("GPUQueue", "submit", "submit", (_r, args) => {
      counts.commandBuffersSubmitted += args[0]?.length ?? 0;
      timing.lastSubmitEndMs = perf.now();
    });
    add("GPUQueue", "writeBuffer", "writeBuffer", (_r, args) => {
      counts.writeBufferBytes += byteLengthOf(args[2], args[3], args[4]);
    });
    return installed;
  }
  function snapshot() {
    return { ...counts };
  }

  // web/probes/live-objects.js
  var live = {
    bindGroupsCreated: 0,
    bindGroupsCollected: 0,
    buffersCreated: 0,
    buffersCollected: 0,
    bufferBytesCreated: 0,
    bufferBytesDestroyed: 0,
    bufferBytesCollected: 0,
    // buffers by count, as bytes: destroyed, and collected before being destroyed (a wrapper of a
    // destroyed buffer that is collected later frees nothing more: it is not counted again)
    buffersDestroyed: 0,
    buffersGoneCollected: 0
  };
  var recordOf = /* @__PURE__ */ new WeakMap();
  var recordsOf = /* @__PURE__ */ new WeakMap();
  function gone(record, how) {
    if (record.gone) return;
    record.gone = how;
    if (how === "collected") {
      live.bufferBytesCollected += record.size;
      live.buffersGoneCollected += 1;
    } else {
      live.bufferBytesDestroyed += record.size;
      live.buffersDestroyed += 1;
    }
    recordsOf.get(record.device)?.delete(record);
  }
  function deviceGone(device) {
    const records = recordsOf.get(device);
    if (!records) return;
    for (const r of [...records]) gone(r, "destroyed");
  }
  var registry = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((held) => {
    if (held === "bg") {
      live.bindGroupsCollected += 1;
      return;
    }
    live.buffersCollected += 1;
    gone(held, "collected");
  }) : null;
  function installLiveObjects() {
    onCreate("createBindGroup", (bg) => {
      live.bindGroupsCreated += 1;
      if (registry && bg) registry.register(bg, "bg");
    });
    onCreate("createBuffer", (buf, args, device) => {
      live.buffersCreated += 1;
      const size = Number(args[0]?.size ?? 0) || 0;
      live.bufferBytesCreated += size;
      const record = { size, gone: null, device };
      if (buf && typeof buf === "object") recordOf.set(buf, record);
      if (device && typeof device === "object") {
        if (!recordsOf.has(device)) {
          recordsOf.set(device, /* @__PURE__ */ new Set());
          Promise.resolve(device.lost).then(() => deviceGone(device), () => {
          });
        }
        recordsOf.get(device).add(record);
      }
      if (registry && buf) registry.register(buf, record);
    });
    onCreate("bufferDestroy", (_r, _args, buf) => {
      const record = buf && recordOf.get(buf);
      if (record) gone(record, "destroyed");
    });
    onCreate("deviceDestroy", (_r, _args, device) => deviceGone(device));
    return registry !== null;
  }
  function liveSnapshot() {
    return {
      bind_groups_created: live.bindGroupsCreated,
      bind_groups_collected: live.bindGroupsCollected,
      bind_groups_live: live.bindGroupsCreated - live.bindGroupsCollected,
      buffers_created: live.buffersCreated,
      buffers_collected: live.buffersCollected,
      buffers_live: live.buffersCreated - live.buffersCollected,
      buffer_bytes_created: live.bufferBytesCreated,
      buffer_bytes_destroyed: live.bufferBytesDestroyed,
      buffer_bytes_collected: live.bufferBytesCollected,
      buffer_bytes_live: live.bufferBytesCreated - live.bufferBytesDestroyed - live.bufferBytesCollected,
      buffers_destroyed: live.buffersDestroyed,
      buffers_not_destroyed: live.buffersCreated - live.buffersDestroyed - live.buffersGoneCollected
    };
  }

  // web/emulation/internals.js
  var INTERNAL = /* @__PURE__ */ Symbol("webgpu-emulated.internal");
  var CONSTRUCT = /* @__PURE__ */ Symbol("webgpu-emulated.construct");
  var GPUBufferUsageFlags = Object.freeze({
    MAP_READ: 1,
    MAP_WRITE: 2,
    COPY_SRC: 4,
    COPY_DST: 8,
    INDEX: 16,
    VERTEX: 32,
    UNIFORM: 64,
    STORAGE: 128,
    INDIRECT: 256,
    QUERY_RESOLVE: 512
  });
  var GPUMapModeFlags = Object.freeze({ READ: 1, WRITE: 2 });
  var GPUShaderStageFlags = Object.freeze({ VERTEX: 1, FRAGMENT: 2, COMPUTE: 4 });
  var GPUTextureUsageFlags = Object.freeze({
    COPY_SRC: 1,
    COPY_DST: 2,
    TEXTURE_BINDING: 4,
    STORAGE_BINDING: 8,
    RENDER_ATTACHMENT: 16
  });
  var ALL_BUFFER_USAGE = 1023;
  var DEFAULT_LIMITS = Object.freeze({
    maxTextureDimension1D: 8192,
    maxTextureDimension2D: 8192,
    maxTextureDimension3D: 2048,
    maxTextureArrayLayers: 256,
    maxBindGroups: 4,
    maxBindGroupsPlusVertexBuffers: 24,
    maxImmediateSize: 64,
    maxBindingsPerBindGroup: 1e3,
    maxDynamicUniformBuffersPerPipelineLayout: 8,
    maxDynamicStorageBuffersPerPipelineLayout: 4,
    maxSampledTexturesPerShaderStage: 16,
    maxSamplersPerShaderStage: 16,
    maxStorageBuffersPerShaderStage: 8,
    maxStorageBuffersInVertexStage: 8,
    maxStorageBuffersInFragmentStage: 8,
    maxStorageTexturesPerShaderStage: 4,
    maxStorageTexturesInVertexStage: 4,
    maxStorageTexturesInFragmentStage: 4,
    maxUniformBuffersPerShaderStage: 12,
    maxUniformBufferBindingSize: 65536,
    maxStorageBufferBindingSize: 134217728,
    minUniformBufferOffsetAlignment: 256,
    minStorageBufferOffsetAlignment: 256,
    maxVertexBuffers: 8,
    maxBufferSize: 268435456,
    maxVertexAttributes: 16,
    maxVertexBufferArrayStride: 2048,
    maxInterStageShaderVariables: 16,
    maxColorAttachments: 8,
    maxColorAttachmentBytesPerSample: 32,
    maxComputeWorkgroupStorageSize: 16384,
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupSizeX: 256,
    maxComputeWorkgroupSizeY: 256,
    maxComputeWorkgroupSizeZ: 64,
    maxComputeWorkgroupsPerDimension: 65535
  });
  var WEBKIT_APPLE7_LIMITS = Object.freeze({
    ...DEFAULT_LIMITS,
    maxTextureDimension1D: 16384,
    maxTextureDimension2D: 16384,
    maxTextureArrayLayers: 2048,
    maxBindGroups: 11,
    maxBindGroupsPlusVertexBuffers: 30,
    maxBindingsPerBindGroup: 65535,
    maxDynamicUniformBuffersPerPipelineLayout: 65535,
    maxDynamicStorageBuffersPerPipelineLayout: 65535,
    maxSampledTexturesPerShaderStage: 44,
    maxSamplersPerShaderStage: 22,
    maxStorageBuffersPerShaderStage: 44,
    maxStorageTexturesPerShaderStage: 44,
    maxUniformBuffersPerShaderStage: 44,
    maxUniformBufferBindingSize: 268435456,
    maxStorageBufferBindingSize: 268435456,
    minUniformBufferOffsetAlignment: 32,
    minStorageBufferOffsetAlignment: 32,
    maxVertexBuffers: 12,
    maxVertexAttributes: 30,
    maxVertexBufferArrayStride: 65532,
    maxInterStageShaderVariables: 124,
    maxColorAttachmentBytesPerSample: 64,
    maxComputeWorkgroupStorageSize: 32768,
    maxComputeInvocationsPerWorkgroup: 1024,
    maxComputeWorkgroupSizeX: 1024,
    maxComputeWorkgroupSizeY: 1024,
    maxComputeWorkgroupSizeZ: 1024
  });
  var WEBKIT_IOS_2025_LIMITS = Object.freeze({ ...WEBKIT_APPLE7_LIMITS, maxBufferSize: 1073741824 });
  var LIMIT_PRESETS = Object.freeze({
    "spec-default": DEFAULT_LIMITS,
    "webkit-apple7": WEBKIT_APPLE7_LIMITS,
    "ios-2024": WEBKIT_APPLE7_LIMITS,
    "ios-2025": WEBKIT_IOS_2025_LIMITS
  });
  var ALIGNMENT_LIMITS = /* @__PURE__ */ new Set(["minUniformBufferOffsetAlignment", "minStorageBufferOffsetAlignment"]);
  function illegalConstructor(token) {
    if (token !== CONSTRUCT) throw new TypeError("Illegal constructor");
  }
  function native(obj, kind) {
    const n = obj != null ? obj[INTERNAL] : void 0;
    if (!n || n.kind !== kind) throw new TypeError(`Illegal invocation: not a ${kind}`);
    return n;
  }
  function arg(obj, kind, what) {
    const n = obj != null ? obj[INTERNAL] : void 0;
    if (!n || n.kind !== kind) throw new TypeError(`${what} is not of type ${kind}`);
    return n;
  }
  function required(dict, member, where) {
    if (dict == null || dict[member] === void 0) {
      throw new TypeError(`${where}: required member ${member} is undefined`);
    }
    return dict[member];
  }
  function toSize(value, what, max = Number.MAX_SAFE_INTEGER) {
    const n = typeof value === "bigint" ? Number(value) : Number(value);
    if (!Number.isFinite(n)) throw new TypeError(`${what} is not a finite number`);
    const t = Math.trunc(n);
    if (t < 0 || t > max) throw new TypeError(`${what} is outside the accepted range`);
    return t;
  }
  function domException(name, message) {
    return new DOMException(message, name);
  }
  var runTask = null;
  function afterTask(fn) {
    if (!runTask) {
      if (typeof setImmediate === "function") {
        runTask = (f) => setImmediate(f);
      } else if (typeof MessageChannel === "function") {
        const channel = new MessageChannel();
        const queue = [];
        channel.port1.onmessage = () => {
          const f = queue.shift();
          if (f) f();
        };
        runTask = (f) => {
          queue.push(f);
          channel.port2.postMessage(0);
        };
      } else {
        runTask = (f) => setTimeout(f, 0);
      }
    }
    runTask(fn);
  }
  function defineLabel(Class) {
    Object.defineProperty(Class.prototype, "label", {
      get() {
        return this[INTERNAL].label;
      },
      set(v) {
        this[INTERNAL].label = String(v);
      },
      enumerable: true,
      configurable: true
    });
  }
  function makeNative(kind, device, label) {
    return { kind, device, label: label === void 0 ? "" : String(label), valid: true };
  }

  // web/emulation/errors.js
  var GPUError = class _GPUError {
    constructor(message) {
      if (new.target === _GPUError) throw new TypeError("Illegal constructor");
      this[INTERNAL] = { message: String(message ?? "") };
    }
    get message() {
      return this[INTERNAL].message;
    }
  };
  var GPUValidationError = class extends GPUError {
  };
  var GPUOutOfMemoryError = class extends GPUError {
  };
  var GPUInternalError = class extends GPUError {
  };
  var GPUPipelineError = class extends DOMException {
    constructor(message = "", options = {}) {
      super(message, "GPUPipelineError");
      if (options.reason !== "validation" && options.reason !== "internal") {
        throw new TypeError("GPUPipelineError: reason must be 'validation' or 'internal'");
      }
      Object.defineProperty(this, INTERNAL, { value: { reason: options.reason } });
    }
    get reason() {
      return this[INTERNAL].reason;
    }
  };
  var EventBase = typeof Event === "function" ? Event : class {
    constructor(type) {
      this.type = type;
    }
  };
  var GPUUncapturedErrorEvent = class extends EventBase {
    constructor(type, init) {
      super(type, init);
      if (!init || !(init.error instanceof GPUError)) throw new TypeError("GPUUncapturedErrorEvent: error is required");
      Object.defineProperty(this, INTERNAL, { value: { error: init.error } });
    }
    get error() {
      return this[INTERNAL].error;
    }
  };
  var GPUDeviceLostInfo = class {
    constructor(token, reason, message) {
      if (token !== INTERNAL) throw new TypeError("Illegal constructor");
      this[INTERNAL] = { reason, message };
    }
    get reason() {
      return this[INTERNAL].reason;
    }
    get message() {
      return this[INTERNAL].message;
    }
  };
  var GPUCompilationMessage = class {
    constructor(token, init) {
      if (token !== INTERNAL) throw new TypeError("Illegal constructor");
      this[INTERNAL] = init;
    }
    get message() {
      return this[INTERNAL].message;
    }
    get type() {
      return this[INTERNAL].type;
    }
    get lineNum() {
      return this[INTERNAL].lineNum;
    }
    get linePos() {
      return this[INTERNAL].linePos;
    }
    get offset() {
      return this[INTERNAL].offset;
    }
    get length() {
      return this[INTERNAL].length;
    }
  };
  var GPUCompilationInfo = class {
    constructor(token, messages) {
      if (token !== INTERNAL) throw new TypeError("Illegal constructor");
      this[INTERNAL] = { messages: Object.freeze(messages.slice()) };
    }
    get messages() {
      return this[INTERNAL].messages;
    }
  };
  var ERROR_CLASS = { validation: GPUValidationError, "out-of-memory": GPUOutOfMemoryError, internal: GPUInternalError };
  function generateError(dev, filter, message) {
    if (dev.lost) return;
    dev.ledger.errorsGenerated++;
    const error = new ERROR_CLASS[filter](message);
    for (let i = dev.errorScopes.length - 1; i >= 0; i--) {
      const scope = dev.errorScopes[i];
      if (scope.filter === filter) {
        if (scope.error === null) scope.error = error;
        return;
      }
    }
    const target = dev.eventTarget;
    afterTask(() => {
      if (dev.lost || !target) return;
      const event = new GPUUncapturedErrorEvent("uncapturederror", { error, cancelable: true });
      if (typeof target.dispatchEvent === "function") target.dispatchEvent(event);
      if (!event.defaultPrevented && dev.options.logUncapturedErrors !== false) {
        console.warn(`[webgpu-emulated] uncaptured ${filter} error: ${message}`);
      }
    });
  }
  function validationError(dev, message) {
    generateError(dev, "validation", message);
  }
  function pushErrorScope(dev, filter) {
    if (!(filter in ERROR_CLASS)) throw new TypeError(`pushErrorScope: invalid filter '${filter}'`);
    dev.errorScopes.push({ filter, error: null });
  }
  function popErrorScope(dev) {
    if (dev.lost) return Promise.resolve(null);
    const scope = dev.errorScopes.pop();
    if (!scope) return Promise.reject(domException("OperationError", "popErrorScope: the error scope stack is empty"));
    return new Promise((resolve) => afterTask(() => resolve(scope.error)));
  }

  // web/emulation/wgsl-reflect.js
  var SCALARS = { f32: [4, 4], i32: [4, 4], u32: [4, 4], f16: [2, 2], bool: [4, 4] };
  var SHORT_SCALAR = { f: "f32", i: "i32", u: "u32", h: "f16" };
  function stripComments(code) {
    let out = "";
    let i = 0;
    let depth = 0;
    while (i < code.length) {
      const two = code.slice(i, i + 2);
      if (depth === 0 && two === "//") {
        while (i < code.length && code[i] !== "\n") i++;
        continue;
      }
      if (two === "/*") {
        depth++;
        i += 2;
        continue;
      }
      if (depth > 0 && two === "*/") {
        depth--;
        i += 2;
        out += " ";
        continue;
      }
      if (depth > 0) {
        if (code[i] === "\n") out += "\n";
        i++;
        continue;
      }
      out += code[i++];
    }
    return out;
  }
  function roundUp(k, n) {
    return Math.ceil(n / k) * k;
  }
  function parseTypeExpr(text) {
    let pos = 0;
    const s = text.trim();
    function skipWs() {
      while (pos < s.length && /\s/.test(s[pos])) pos++;
    }
    function parseOne() {
      skipWs();
      const m = /^[A-Za-z_][\w]*|^[0-9][\w.]*/.exec(s.slice(pos));
      if (!m) return null;
      pos += m[0].length;
      const node2 = { name: m[0], args: [] };
      skipWs();
      if (s[pos] === "<") {
        pos++;
        for (; ; ) {
          const arg2 = parseOne();
          if (!arg2) return null;
          node2.args.push(arg2);
          skipWs();
          if (s[pos] === ",") {
            pos++;
            skipWs();
            if (s[pos] === ">") {
              pos++;
              break;
            }
            continue;
          }
          if (s[pos] === ">") {
            pos++;
            break;
          }
          return null;
        }
      }
      return node2;
    }
    const node = parseOne();
    return node;
  }
  function sizeAlign(node, structs, aliases, seen = /* @__PURE__ */ new Set()) {
    if (!node) return null;
    let { name, args } = node;
    if (aliases.has(name) && !seen.has(name)) {
      seen.add(name);
      return sizeAlign(aliases.get(name), structs, aliases, seen);
    }
    if (SCALARS[name]) return { size: SCALARS[name][0], align: SCALARS[name][1] };
    if (name === "atomic") return sizeAlign(args[0], structs, aliases, seen);
    let m = /^vec([234])([fiuh]?)$/.exec(name);
    if (m) {
      const scalar = m[2] ? { name: SHORT_SCALAR[m[2]], args: [] } : args[0];
      const e = sizeAlign(scalar, structs, aliases, seen);
      if (!e) return null;
      const n = Number(m[1]);
      return { size: n * e.size, align: (n === 3 ? 4 : n) * e.size };
    }
    m = /^mat([234])x([234])([fh]?)$/.exec(name);
    if (m) {
      const cols = Number(m[1]);
      const col = sizeAlign({ name: `vec${m[2]}${m[3]}`, args: m[3] ? [] : args }, structs, aliases, seen);
      if (!col) return null;
      return { size: cols * roundUp(col.align, col.size), align: col.align };
    }
    if (name === "array") {
      const e = sizeAlign(args[0], structs, aliases, seen);
      if (!e) return null;
      const stride = roundUp(e.align, e.size);
      if (args.length < 2) return { size: stride, align: e.align, runtimeSized: true };
      const count = parseInt(args[1].name, 10);
      if (!Number.isFinite(count)) return null;
      return { size: count * stride, align: e.align };
    }
    if (structs.has(name)) {
      if (seen.has("struct:" + name)) return null;
      seen.add("struct:" + name);
      let offset = 0;
      let align = 1;
      let runtimeSized = false;
      for (const member of structs.get(name)) {
        const t = sizeAlign(member.type, structs, aliases, seen);
        if (!t) return null;
        const a = member.align ?? t.align;
        const sz = member.size ?? t.size;
        offset = roundUp(a, offset) + sz;
        align = Math.max(align, a);
        runtimeSized = runtimeSized || !!t.runtimeSized;
      }
      return { size: roundUp(align, offset), align, runtimeSized };
    }
    return null;
  }
  function matchBrace(src, open) {
    let depth = 0;
    for (let i = open; i < src.length; i++) {
      if (src[i] === "{") depth++;
      else if (src[i] === "}") {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  function parseAttrs(text) {
    const attrs = /* @__PURE__ */ new Map();
    const re = /@\s*([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?/g;
    let m;
    while (m = re.exec(text)) attrs.set(m[1], m[2] === void 0 ? "" : m[2].trim());
    return attrs;
  }
  function intAttr(v) {
    if (v === void 0) return void 0;
    const n = parseInt(String(v).replace(/[iu]$/, ""), 10);
    return Number.isFinite(n) ? n : void 0;
  }
  function classify(addressSpace, access, typeNode) {
    if (addressSpace === "uniform") return { kind: "buffer", type: "uniform" };
    if (addressSpace === "storage") {
      return { kind: "buffer", type: access === "read_write" ? "storage" : "read-only-storage" };
    }
    const name = typeNode ? typeNode.name : "";
    if (name === "sampler") return { kind: "sampler", type: "filtering" };
    if (name === "sampler_comparison") return { kind: "sampler", type: "comparison" };
    if (name === "texture_external") return { kind: "externalTexture" };
    if (name.startsWith("texture_storage_")) return { kind: "storageTexture" };
    if (name.startsWith("texture_")) return { kind: "texture" };
    return { kind: "unknown" };
  }
  function reflectWgsl(code) {
    const result = { ok: true, error: "", entryPoints: [], resources: [], functions: /* @__PURE__ */ new Map(), structs: /* @__PURE__ */ new Map() };
    if (typeof code !== "string") return { ...result, ok: false, error: "code is not a string" };
    const src = stripComments(code);
    for (const [a, b] of [["{", "}"], ["(", ")"], ["[", "]"]]) {
      let depth = 0;
      for (const ch of src) {
        if (ch === a) depth++;
        else if (ch === b && --depth < 0) break;
      }
      if (depth !== 0) return { ...result, ok: false, error: `unbalanced '${a}${b}' in WGSL source` };
    }
    const topLevel = [];
    const structs = result.structs;
    const aliases = /* @__PURE__ */ new Map();
    let i = 0;
    let start = 0;
    while (i < src.length) {
      const ch = src[i];
      if (ch === "{") {
        const end = matchBrace(src, i);
        topLevel.push({ head: src.slice(start, i), body: src.slice(i + 1, end - 1) });
        i = end;
        start = i;
        continue;
      }
      if (ch === ";") {
        topLevel.push({ head: src.slice(start, i), body: null });
        start = i + 1;
      }
      i++;
    }
    for (const { head, body } of topLevel) {
      const h = head.trim();
      let m;
      if (body !== null && (m = /(?:^|\s)struct\s+([A-Za-z_]\w*)\s*$/.exec(h))) {
        const members = [];
        for (const part of body.split(/[,;]/)) {
          let rest = part.trim();
          let attrText = "";
          let am;
          while (am = /^@\s*[A-Za-z_]\w*\s*(?:\([^)]*\))?\s*/.exec(rest)) {
            attrText += am[0];
            rest = rest.slice(am[0].length);
          }
          const mm = /^([A-Za-z_]\w*)\s*:\s*([\s\S]+)$/.exec(rest);
          if (!mm) continue;
          const attrs = parseAttrs(attrText);
          members.push({
            name: mm[1],
            type: parseTypeExpr(mm[2]),
            align: intAttr(attrs.get("align")),
            size: intAttr(attrs.get("size"))
          });
        }
        structs.set(m[1], members);
        continue;
      }
      if (body === null && (m = /(?:^|\s)alias\s+([A-Za-z_]\w*)\s*=\s*([\s\S]+)$/.exec(h))) {
        aliases.set(m[1], parseTypeExpr(m[2]));
        continue;
      }
      if (body === null && (m = /^([\s\S]*?)\bvar\s*(?:<([^>]*)>)?\s*([A-Za-z_]\w*)\s*:\s*([\s\S]+?)\s*(?:=[\s\S]*)?$/.exec(h))) {
        const attrs = parseAttrs(m[1]);
        if (!attrs.has("group") || !attrs.has("binding")) continue;
        const [addressSpace = "", access = ""] = (m[2] || "").split(",").map((x) => x.trim());
        const typeNode = parseTypeExpr(m[4]);
        const res = {
          name: m[3],
          group: intAttr(attrs.get("group")),
          binding: intAttr(attrs.get("binding")),
          addressSpace,
          access,
          typeText: m[4].trim(),
          ...classify(addressSpace, access, typeNode),
          minBindingSize: 0
        };
        if (res.kind === "buffer") res.typeNode = typeNode;
        result.resources.push(res);
        continue;
      }
      if (body !== null && (m = /^([\s\S]*?)\bfn\s+([A-Za-z_]\w*)\s*\(/.exec(h))) {
        const attrs = parseAttrs(m[1]);
        const stage = attrs.has("compute") ? "compute" : attrs.has("vertex") ? "vertex" : attrs.has("fragment") ? "fragment" : null;
        const idents = new Set(body.match(/[A-Za-z_]\w*/g) || []);
        result.functions.set(m[2], { name: m[2], stage, idents, workgroupSize: attrs.get("workgroup_size") });
        if (stage) result.entryPoints.push({ name: m[2], stage });
      }
    }
    for (const res of result.resources) {
      if (res.kind !== "buffer") continue;
      const sa = sizeAlign(res.typeNode, structs, aliases);
      res.minBindingSize = sa ? sa.size : 0;
      delete res.typeNode;
    }
    return result;
  }
  function bindingsForEntryPoint(reflection, entryPointName) {
    const fns = reflection.functions;
    const seen = /* @__PURE__ */ new Set();
    const idents = /* @__PURE__ */ new Set();
    const stack = [entryPointName];
    while (stack.length) {
      const name = stack.pop();
      if (seen.has(name) || !fns.has(name)) continue;
      seen.add(name);
      for (const id of fns.get(name).idents) {
        idents.add(id);
        if (fns.has(id) && !seen.has(id)) stack.push(id);
      }
    }
    return reflection.resources.filter((r) => idents.has(r.name));
  }

  // web/emulation/memory-model.js
  var STAGE_VERTEX = 1;
  var STAGE_FRAGMENT = 2;
  var STAGE_COMPUTE = 4;
  var STAGES = [["vertex", STAGE_VERTEX], ["fragment", STAGE_FRAGMENT], ["compute", STAGE_COMPUTE]];
  var MODEL_SOURCE = "WebKit Source/WebGPU/WebGPU/BindGroup.mm (one shared-storage MTLBuffer per shader stage with bindings, sized by the argument encoder, no pooling, no extra cost reported to JSC); defaults sized to microsoft/onnxruntime #33750 (~150,000 bind groups at a 2,048 MB kill); see /work/shared/references.md";
  var WEBKIT_MODELS = Object.freeze({
    // A compute pass encoder holds strong references to the bind groups set on it: WebKit
    // Source/WebGPU/WebGPU/ComputePassEncoder.h, m_bindGroups, a map of WeakPtr<BindGroup> in
    // earlier versions and of RefPtr / Ref<const BindGroup> in later ones (references.md: "since
    // 2024, encoders hold strong references to the bind groups they use"). Modeled as: the
    // GPUCommandEncoder wrapper keeps every GPUBindGroup wrapper set on its passes alive until the
    // encoder wrapper (and its pass wrappers) are collected, so an application that keeps encoders
    // referenced keeps their bind groups' native memory.
    encoderRetainsBindGroups: "webkit-encoder-retains-bind-groups: ComputePassEncoder.h m_bindGroups holds Ref<const BindGroup> (2024 on)",
    // A buffer records every command encoder that used it until it is destroyed: WebKit
    // Source/WebGPU/WebGPU/Buffer.h, Buffer::setCommandEncoder adding to m_commandEncoders (a
    // WeakHashSet<CommandEncoder>), cleared by destroy(); fixed in December 2025 (references.md:
    // "long-lived buffers kept a record of every command encoder that used them until destroyed,
    // so memory grew with encoder count over hours"). Modeled as encoderRecordBytes per
    // (buffer, encoder) pair, charged to the buffer until destroy() or its collection.
    bufferRecordsEncoders: "webkit-buffer-records-encoders: Buffer.h m_commandEncoders kept until destroy() (before the Dec 2025 fix)"
  });
  var FAILURE_MODELS = Object.freeze({
    // memory-budget.js, atMemoryBudget 'out-of-memory'
    outOfMemory: "out-of-memory-at-budget (a model): createBuffer that would take the modeled bytes past memoryBudgetBytes generates a GPUOutOfMemoryError (error scope or uncapturederror) and returns an invalid buffer; the device and page live on (WebGPU spec, createBuffer: a failed allocation generates an out-of-memory error and the buffer is invalid)",
    // resources.js createBindGroup (always on: spec validation, set the limit with limits.maxStorageBufferBindingSize)
    bindingSize: "binding-size-validation: createBindGroup rejects a storage binding larger than maxStorageBufferBindingSize (a uniform one larger than maxUniformBufferBindingSize) with a GPUValidationError and an invalid bind group (WebGPU spec, createBindGroup validation)",
    // commands.js GPUComputePassEncoder.setImmediates
    immediates: "immediates (a model): setImmediates is validated (4-byte alignment, within maxImmediateSize) and counted; no shader runs, so nothing reads it (WebGPU spec setImmediates; Chrome 149–150)"
  });
  function resolveModel(options = {}) {
    const argumentBytes = {
      buffer: 8,
      sampler: 8,
      texture: 8,
      storageTexture: 8,
      externalTexture: 8,
      ...options.argumentBytes || {}
    };
    const bytesPerStage = options.bytesPerStage ?? 16384;
    const pageBytes = options.pageBytes ?? 16384;
    for (const [k, v] of Object.entries({ bytesPerStage, pageBytes, ...argumentBytes })) {
      if (!Number.isInteger(v) || v < 0) throw new TypeError(`memory model: ${k} must be a non-negative integer`);
    }
    const encoderRecordBytes = options.encoderRecordBytes ?? 16;
    if (!Number.isInteger(encoderRecordBytes) || encoderRecordBytes < 0) throw new TypeError("memory model: encoderRecordBytes must be a non-negative integer");
    for (const k of Object.keys(WEBKIT_MODELS)) {
      if (options[k] !== void 0 && typeof options[k] !== "boolean") throw new TypeError(`memory model: ${k} must be true or false`);
    }
    return Object.freeze({
      name: options.modelName ?? "webkit-bind-group-argument-buffers",
      description: "one MTLBuffer per shader stage with bindings; stageBytes = max(bytesPerStage, roundUp(sum of argumentBytes over the stage's entries, pageBytes)); freed only when the wrapper is collected and no in-flight work uses it",
      source: MODEL_SOURCE,
      bytesPerStage,
      pageBytes,
      argumentBytes: Object.freeze(argumentBytes),
      reportCostToJs: !!options.reportCostToJs,
      encoderRetainsBindGroups: !!options.encoderRetainsBindGroups,
      bufferRecordsEncoders: !!options.bufferRecordsEncoders,
      // bytes per (buffer, encoder) record: one 8-byte pointer in a hash set at ≤ 50% load; an
      // assumption (WebKit publishes no figure), settable
      encoderRecordBytes,
      webkitModels: Object.freeze(Object.keys(WEBKIT_MODELS).filter((k) => options[k]).map((k) => WEBKIT_MODELS[k])),
      failureModels: Object.freeze([
        FAILURE_MODELS.bindingSize,
        FAILURE_MODELS.immediates,
        ...options.atMemoryBudget === "out-of-memory" && options.memoryBudgetBytes > 0 ? [FAILURE_MODELS.outOfMemory] : []
      ])
    });
  }
  function encodedLengths(model, entries) {
    const out = { vertex: 0, fragment: 0, compute: 0 };
    for (const e of entries) {
      const bytes = model.argumentBytes[e.kind] ?? 8;
      for (const [name, bit] of STAGES) if (e.visibility & bit) out[name] += bytes;
    }
    return out;
  }
  function stageBytes(model, encodedLength) {
    if (encodedLength <= 0) return 0;
    const rounded = model.pageBytes > 0 ? Math.ceil(encodedLength / model.pageBytes) * model.pageBytes : encodedLength;
    return Math.max(model.bytesPerStage, rounded);
  }
  function bindGroupBytes(model, lengths) {
    return stageBytes(model, lengths.vertex) + stageBytes(model, lengths.fragment) + stageBytes(model, lengths.compute);
  }
  var Ledger = class {
    constructor(model) {
      this.model = model;
      this.bindGroupsCreated = 0;
      this.bindGroupsInvalid = 0;
      this.bindGroupWrappersCollected = 0;
      this.bindGroupsCollected = 0;
      this.modeledNativeBytes = 0;
      this.modeledNativeBytesPeak = 0;
      this.buffersCreated = 0;
      this.buffersDestroyed = 0;
      this.buffersCollected = 0;
      this.buffersLiveBytes = 0;
      this.buffersLiveBytesPeak = 0;
      this.bufferContentsJsBytes = 0;
      this.encoderRecords = 0;
      this.encoderRecordBytes = 0;
      this.submits = 0;
      this.commandBuffersInFlight = 0;
      this.bindGroupRefsHeldByWork = 0;
      this.errorsGenerated = 0;
      this.outOfMemoryErrors = 0;
      this.commandBuffersRejected = 0;
      this.dispatchesDropped = 0;
      this.immediatesSet = 0;
    }
    bindGroupAllocated(bytes) {
      this.bindGroupsCreated++;
      this.modeledNativeBytes += bytes;
      if (this.modeledNativeBytes > this.modeledNativeBytesPeak) this.modeledNativeBytesPeak = this.modeledNativeBytes;
    }
    bindGroupReleased(bytes) {
      this.bindGroupsCollected++;
      this.modeledNativeBytes -= bytes;
    }
    bufferAllocated(bytes) {
      this.buffersCreated++;
      this.buffersLiveBytes += bytes;
      if (this.buffersLiveBytes > this.buffersLiveBytesPeak) this.buffersLiveBytesPeak = this.buffersLiveBytes;
    }
    bufferReleased(bytes, how) {
      if (how === "destroyed") this.buffersDestroyed++;
      else this.buffersCollected++;
      this.buffersLiveBytes -= bytes;
    }
    encoderRecordsAdded(n) {
      this.encoderRecords += n;
      this.encoderRecordBytes += n * this.model.encoderRecordBytes;
    }
    /** Modeled native bytes of buffers: live buffer sizes plus encoder records (when modeled). */
    get modeledBufferBytes() {
      return this.buffersLiveBytes + this.encoderRecordBytes;
    }
    snapshot() {
      return {
        bindGroupsCreated: this.bindGroupsCreated,
        bindGroupsInvalid: this.bindGroupsInvalid,
        bindGroupWrappersCollected: this.bindGroupWrappersCollected,
        bindGroupsCollected: this.bindGroupsCollected,
        bindGroupsLive: this.bindGroupsCreated - this.bindGroupsCollected,
        bindGroupRefsHeldByWork: this.bindGroupRefsHeldByWork,
        modeledNativeBytes: this.modeledNativeBytes,
        modeledNativeBytesPeak: this.modeledNativeBytesPeak,
        buffersCreated: this.buffersCreated,
        buffersDestroyed: this.buffersDestroyed,
        buffersCollected: this.buffersCollected,
        buffersLive: this.buffersCreated - this.buffersDestroyed - this.buffersCollected,
        buffersLiveBytes: this.buffersLiveBytes,
        buffersLiveBytesPeak: this.buffersLiveBytesPeak,
        bufferContentsJsBytes: this.bufferContentsJsBytes,
        encoderRecords: this.encoderRecords,
        encoderRecordBytes: this.encoderRecordBytes,
        modeledBufferBytes: this.modeledBufferBytes,
        submits: this.submits,
        commandBuffersInFlight: this.commandBuffersInFlight,
        errorsGenerated: this.errorsGenerated,
        outOfMemoryErrors: this.outOfMemoryErrors,
        commandBuffersRejected: this.commandBuffersRejected,
        dispatchesDropped: this.dispatchesDropped,
        immediatesSet: this.immediatesSet,
        model: {
          ...this.model,
          argumentBytes: { ...this.model.argumentBytes },
          webkitModels: [...this.model.webkitModels],
          failureModels: [...this.model.failureModels],
          bytesPerComputeOnlyBindGroup: bindGroupBytes(this.model, { vertex: 0, fragment: 0, compute: this.model.argumentBytes.buffer })
        }
      };
    }
  };

  // web/emulation/resources.js
  var collectHandlers = /* @__PURE__ */ Object.create(null);
  var registry2 = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((held) => {
    const h = collectHandlers[held.kind];
    if (h) h(held);
  }) : { register() {
  }, unregister() {
  } };
  function releaseRef(n) {
    if (--n.refs > 0) return;
    if (n.kind === "buffer") freeBuffer(n, "collected");
    else if (n.kind === "bindGroup") freeBindGroup(n);
  }
  collectHandlers.buffer = (n) => releaseRef(n);
  collectHandlers.bindGroup = (n) => {
    n.device.ledger.bindGroupWrappersCollected++;
    releaseRef(n);
  };
  function freeBuffer(n, how) {
    const dev = n.device;
    if (n.charged > 0) {
      dev.ledger.bufferReleased(n.charged, how);
      n.charged = 0;
    }
    dropEncoderRecords(n);
    dropContents(n);
    dev.liveBuffers.delete(n);
  }
  function freeBindGroup(n) {
    const ledger = n.device.ledger;
    ledger.bindGroupReleased(n.bytes);
    const bufs = n.buffers;
    n.buffers = null;
    n.entries = null;
    n.costBlob = null;
    for (let i = 0; i < bufs.length; i++) releaseRef(bufs[i]);
  }
  function ensureContents(n) {
    if (n.contents === null && n.device.options.contents !== "none" && n.size > 0) {
      n.contents = new Uint8Array(n.size);
      n.device.ledger.bufferContentsJsBytes += n.size;
    }
    return n.contents;
  }
  function dropEncoderRecords(n) {
    if (n.encoderRecords > 0) {
      n.device.ledger.encoderRecordsAdded(-n.encoderRecords);
      n.encoderRecords = 0;
    }
  }
  function dropContents(n) {
    if (n.contents !== null) {
      n.device.ledger.bufferContentsJsBytes -= n.size;
      n.contents = null;
    }
  }
  function detach(ab) {
    try {
      structuredClone(ab, { transfer: [ab] });
    } catch {
    }
  }
  var GPUBuffer = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    get size() {
      return native(this, "buffer").size;
    }
    get usage() {
      return native(this, "buffer").usage;
    }
    get mapState() {
      const n = native(this, "buffer");
      return n.mapping ? "mapped" : n.pending ? "pending" : "unmapped";
    }
    mapAsync(mode, offset = 0, size = void 0) {
      const n = native(this, "buffer");
      const dev = n.device;
      mode = toSize(mode, "mapAsync mode", 4294967295);
      offset = toSize(offset, "mapAsync offset");
      if (n.mapping || n.pending) {
        validationError(dev, "mapAsync: buffer is already mapped or has a pending map");
        return Promise.reject(domException("OperationError", "mapAsync: buffer is already mapped or has a pending map"));
      }
      let resolve;
      let reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const pending = { promise, resolve, reject, mode };
      n.pending = pending;
      const rangeSize = size === void 0 ? Math.max(0, n.size - offset) : toSize(size, "mapAsync size");
      const fail = (message) => {
        validationError(dev, `mapAsync: ${message}`);
        afterTask(() => {
          if (n.pending !== pending) return;
          n.pending = null;
          reject(domException("OperationError", `mapAsync: ${message}`));
        });
        return promise;
      };
      if (dev.lost) {
        afterTask(() => {
          if (n.pending === pending) {
            n.pending = null;
            reject(domException("AbortError", "mapAsync: device is lost"));
          }
        });
        return promise;
      }
      if (!n.valid) return fail("buffer is invalid");
      if (n.state === "destroyed") return fail("buffer is destroyed");
      if (n.state !== "available") return fail("buffer is not available");
      if (offset % 8 !== 0) return fail(`offset ${offset} is not a multiple of 8`);
      if (rangeSize % 4 !== 0) return fail(`size ${rangeSize} is not a multiple of 4`);
      if (offset + rangeSize > n.size) return fail(`range [${offset}, ${offset + rangeSize}) exceeds the buffer size ${n.size}`);
      const read = mode === GPUMapModeFlags.READ;
      const write = mode === GPUMapModeFlags.WRITE;
      if (!read && !write) return fail("mode must be exactly one of GPUMapMode.READ or GPUMapMode.WRITE");
      if (read && !(n.usage & GPUBufferUsageFlags.MAP_READ)) return fail("buffer usage does not contain MAP_READ");
      if (write && !(n.usage & GPUBufferUsageFlags.MAP_WRITE)) return fail("buffer usage does not contain MAP_WRITE");
      n.state = "unavailable";
      dev.queue.whenDone(dev.queue.submitted).then(() => {
        if (n.pending !== pending) return;
        n.pending = null;
        if (dev.lost) {
          if (n.state === "unavailable") n.state = "available";
          reject(domException("AbortError", "mapAsync: device was lost"));
          return;
        }
        n.mapping = { mode, start: offset, end: offset + rangeSize, views: [] };
        resolve(void 0);
      });
      return promise;
    }
    getMappedRange(offset = 0, size = void 0) {
      const n = native(this, "buffer");
      offset = toSize(offset, "getMappedRange offset");
      const m = n.mapping;
      if (!m) throw domException("OperationError", "getMappedRange: buffer is not mapped");
      const rangeSize = size === void 0 ? Math.max(0, n.size - offset) : toSize(size, "getMappedRange size");
      if (offset % 8 !== 0) throw domException("OperationError", "getMappedRange: offset is not a multiple of 8");
      if (rangeSize % 4 !== 0) throw domException("OperationError", "getMappedRange: size is not a multiple of 4");
      if (offset < m.start || offset + rangeSize > m.end) throw domException("OperationError", "getMappedRange: range is outside the mapped range");
      for (const v of m.views) {
        if (offset < v.offset + v.size && v.offset < offset + rangeSize) {
          throw domException("OperationError", "getMappedRange: range overlaps a range already returned");
        }
      }
      const ab = new ArrayBuffer(rangeSize);
      if (n.contents !== null && rangeSize > 0) new Uint8Array(ab).set(n.contents.subarray(offset, offset + rangeSize));
      m.views.push({ offset, size: rangeSize, ab });
      return ab;
    }
    unmap() {
      const n = native(this, "buffer");
      unmapNative(n);
    }
    destroy() {
      const n = native(this, "buffer");
      destroyBufferNative(n);
    }
  };
  defineLabel(GPUBuffer);
  function unmapNative(n) {
    if (n.pending) {
      const p = n.pending;
      n.pending = null;
      if (n.state === "unavailable") n.state = "available";
      p.reject(domException("AbortError", "mapAsync: cancelled by unmap()"));
    }
    const m = n.mapping;
    if (!m) return;
    n.mapping = null;
    const keep = n.valid && n.state !== "destroyed" && m.mode === GPUMapModeFlags.WRITE;
    for (const v of m.views) {
      if (keep && v.ab.byteLength === v.size && v.size > 0) {
        const bytes = new Uint8Array(v.ab);
        if (n.contents !== null || bytes.some((x) => x !== 0)) ensureContents(n)?.set(bytes, v.offset);
      }
      detach(v.ab);
    }
    if (n.state === "unavailable") n.state = "available";
  }
  function destroyBufferNative(n) {
    if (n.mapping || n.pending) unmapNative(n);
    if (n.state === "destroyed") return;
    n.state = "destroyed";
    if (n.charged > 0) {
      n.device.ledger.bufferReleased(n.charged, "destroyed");
      n.charged = 0;
    }
    dropEncoderRecords(n);
    dropContents(n);
    n.device.liveBuffers.delete(n);
  }
  function createBuffer(dev, desc) {
    const where = "createBuffer";
    const size = toSize(required(desc, "size", where), `${where}: size`);
    const usage = toSize(required(desc, "usage", where), `${where}: usage`, 4294967295);
    const mappedAtCreation = !!desc.mappedAtCreation;
    if (mappedAtCreation && size % 4 !== 0) throw new RangeError(`${where}: mappedAtCreation requires size % 4 == 0`);
    const n = makeNative("buffer", dev, desc.label);
    n.size = size;
    n.usage = usage;
    n.state = "available";
    n.contents = null;
    n.mapping = null;
    n.pending = null;
    n.charged = 0;
    n.encoderRecords = 0;
    n.refs = 1;
    let error = null;
    if (usage === 0) error = "usage must not be 0";
    else if (usage & ~ALL_BUFFER_USAGE) error = `usage 0x${usage.toString(16)} has unknown bits`;
    else if (usage & GPUBufferUsageFlags.MAP_READ && usage & ~(GPUBufferUsageFlags.MAP_READ | GPUBufferUsageFlags.COPY_DST)) error = "MAP_READ may only be combined with COPY_DST";
    else if (usage & GPUBufferUsageFlags.MAP_WRITE && usage & ~(GPUBufferUsageFlags.MAP_WRITE | GPUBufferUsageFlags.COPY_SRC)) error = "MAP_WRITE may only be combined with COPY_SRC";
    else if (size > dev.limits.maxBufferSize) error = `size ${size} exceeds maxBufferSize ${dev.limits.maxBufferSize}`;
    if (error) {
      n.valid = false;
      validationError(dev, `${where}: ${error}`);
    } else if (!dev.lost && dev.budget?.refuses(dev, size)) {
      n.valid = false;
      dev.ledger.outOfMemoryErrors++;
      generateError(dev, "out-of-memory", `${where}: out of memory: ${size} bytes${desc.label ? ` for '${desc.label}'` : ""} would take the page's modeled bytes past memoryBudgetBytes ${dev.budget.budgetBytes} (webgpu-emulated model)`);
    } else if (!dev.lost) {
      n.charged = size;
      dev.ledger.bufferAllocated(size);
      dev.liveBuffers.add(n);
      dev.budget?.charged(dev);
    }
    if (mappedAtCreation) {
      n.mapping = { mode: GPUMapModeFlags.WRITE, start: 0, end: size, views: [] };
      n.state = "unavailable";
    }
    const w = new GPUBuffer(CONSTRUCT, n);
    registry2.register(w, n);
    return w;
  }
  var GPUShaderModule = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    getCompilationInfo() {
      const n = native(this, "shaderModule");
      const info = new GPUCompilationInfo(INTERNAL, n.messages.map((m) => new GPUCompilationMessage(INTERNAL, m)));
      return new Promise((resolve) => afterTask(() => resolve(info)));
    }
  };
  defineLabel(GPUShaderModule);
  function createShaderModule(dev, desc) {
    const code = required(desc, "code", "createShaderModule");
    const n = makeNative("shaderModule", dev, desc.label);
    n.reflection = reflectWgsl(String(code));
    n.messages = [];
    if (!n.reflection.ok) {
      n.valid = false;
      n.messages.push({ message: n.reflection.error, type: "error", lineNum: 0, linePos: 0, offset: 0, length: 0 });
      validationError(dev, `createShaderModule: ${n.reflection.error}`);
    }
    return new GPUShaderModule(CONSTRUCT, n);
  }
  var GPUBindGroupLayout = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
  };
  defineLabel(GPUBindGroupLayout);
  var GPUPipelineLayout = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
  };
  defineLabel(GPUPipelineLayout);
  var BUFFER_TYPES = /* @__PURE__ */ new Set(["uniform", "storage", "read-only-storage"]);
  var RESOURCE_KINDS = ["buffer", "sampler", "texture", "storageTexture", "externalTexture"];
  function normalizeLayoutEntry(e, where) {
    const binding = toSize(required(e, "binding", where), `${where}: binding`, 4294967295);
    const visibility = toSize(required(e, "visibility", where), `${where}: visibility`, 4294967295);
    const present = RESOURCE_KINDS.filter((k) => e[k] !== void 0 && e[k] !== null);
    const entry = { binding, visibility, kind: present[0] ?? "none", type: "", hasDynamicOffset: false, minBindingSize: 0 };
    if (present.length !== 1) return [entry, `binding ${binding} must set exactly one of ${RESOURCE_KINDS.join("/")}`];
    if (visibility & ~7) return [entry, `binding ${binding} has unknown visibility bits`];
    if (entry.kind === "buffer") {
      const b = e.buffer;
      entry.type = b.type ?? "uniform";
      if (!BUFFER_TYPES.has(entry.type)) throw new TypeError(`${where}: '${entry.type}' is not a valid GPUBufferBindingType`);
      entry.hasDynamicOffset = !!b.hasDynamicOffset;
      entry.minBindingSize = toSize(b.minBindingSize ?? 0, `${where}: minBindingSize`);
      if (entry.type === "storage" && visibility & GPUShaderStageFlags.VERTEX) {
        return [entry, `binding ${binding}: writable storage buffers cannot be visible to VERTEX`];
      }
    } else if (entry.kind === "sampler") {
      entry.type = e.sampler.type ?? "filtering";
    }
    return [entry, null];
  }
  function makeBindGroupLayoutNative(dev, entries, label, exclusive) {
    const n = makeNative("bindGroupLayout", dev, label);
    n.exclusive = exclusive;
    n.entries = /* @__PURE__ */ new Map();
    n.list = [];
    n.dynamic = [];
    n.bytes = 0;
    let error = null;
    for (const entry of entries) {
      if (n.entries.has(entry.binding)) {
        error = error ?? `binding ${entry.binding} appears twice`;
        continue;
      }
      if (entry.binding >= dev.limits.maxBindingsPerBindGroup) {
        error = error ?? `binding ${entry.binding} >= maxBindingsPerBindGroup (${dev.limits.maxBindingsPerBindGroup})`;
      }
      n.entries.set(entry.binding, entry);
      n.list.push(entry);
    }
    n.list.sort((a, b) => a.binding - b.binding);
    n.list.forEach((e, i) => {
      e.index = i;
      if (e.hasDynamicOffset) n.dynamic.push(i);
    });
    let dynUniform = 0;
    let dynStorage = 0;
    for (const e of n.list) {
      if (!e.hasDynamicOffset) continue;
      if (e.type === "uniform") dynUniform++;
      else dynStorage++;
    }
    if (dynUniform > dev.limits.maxDynamicUniformBuffersPerPipelineLayout) error = error ?? "too many dynamic uniform buffers";
    if (dynStorage > dev.limits.maxDynamicStorageBuffersPerPipelineLayout) error = error ?? "too many dynamic storage buffers";
    for (const [bit, stage] of [[1, "vertex"], [2, "fragment"], [4, "compute"]]) {
      const vis = n.list.filter((e) => e.visibility & bit && e.kind === "buffer");
      const storage = vis.filter((e) => e.type !== "uniform").length;
      const uniform = vis.length - storage;
      if (storage > dev.limits.maxStorageBuffersPerShaderStage) error = error ?? `too many storage buffers in the ${stage} stage`;
      if (uniform > dev.limits.maxUniformBuffersPerShaderStage) error = error ?? `too many uniform buffers in the ${stage} stage`;
    }
    n.dynamicUniformCount = dynUniform;
    n.dynamicStorageCount = dynStorage;
    if (error) {
      n.valid = false;
      return [n, error];
    }
    n.lengths = encodedLengths(dev.model, n.list);
    n.bytes = bindGroupBytes(dev.model, n.lengths);
    return [n, null];
  }
  function createBindGroupLayout(dev, desc) {
    const where = "createBindGroupLayout";
    const raw = required(desc, "entries", where);
    const entries = [];
    let firstError = null;
    for (const e of raw) {
      const [entry, err2] = normalizeLayoutEntry(e, where);
      entries.push(entry);
      firstError = firstError ?? err2;
    }
    const [n, err] = makeBindGroupLayoutNative(dev, entries, desc.label, null);
    if (firstError || err) {
      n.valid = false;
      validationError(dev, `${where}: ${firstError || err}`);
    }
    return new GPUBindGroupLayout(CONSTRUCT, n);
  }
  function createPipelineLayout(dev, desc) {
    const where = "createPipelineLayout";
    const layouts = required(desc, "bindGroupLayouts", where);
    const n = makeNative("pipelineLayout", dev, desc.label);
    n.groups = [];
    let error = null;
    for (const l of layouts) {
      if (l === null || l === void 0) {
        n.groups.push(null);
        continue;
      }
      const ln = arg(l, "bindGroupLayout", `${where}: bindGroupLayouts entry`);
      if (!ln.valid) error = error ?? "a bind group layout is invalid";
      if (ln.device !== dev) error = error ?? "a bind group layout belongs to another device";
      n.groups.push(ln);
    }
    if (n.groups.length > dev.limits.maxBindGroups) error = error ?? `more than maxBindGroups (${dev.limits.maxBindGroups}) layouts`;
    let dynU = 0;
    let dynS = 0;
    for (const g of n.groups) if (g) {
      dynU += g.dynamicUniformCount;
      dynS += g.dynamicStorageCount;
    }
    if (dynU > dev.limits.maxDynamicUniformBuffersPerPipelineLayout) error = error ?? "too many dynamic uniform buffers";
    if (dynS > dev.limits.maxDynamicStorageBuffersPerPipelineLayout) error = error ?? "too many dynamic storage buffers";
    if (error) {
      n.valid = false;
      validationError(dev, `${where}: ${error}`);
    }
    return new GPUPipelineLayout(CONSTRUCT, n);
  }
  function layoutsCompatible(a, b) {
    if (a === b) return true;
    if (a.exclusive !== b.exclusive || a.list.length !== b.list.length) return false;
    for (let i = 0; i < a.list.length; i++) {
      const x = a.list[i];
      const y = b.list[i];
      if (x.binding !== y.binding || x.visibility !== y.visibility || x.kind !== y.kind || x.type !== y.type || x.hasDynamicOffset !== y.hasDynamicOffset || x.minBindingSize !== y.minBindingSize) return false;
    }
    return true;
  }
  var GPUBindGroup = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
  };
  defineLabel(GPUBindGroup);
  function createBindGroup(dev, desc) {
    const where = "createBindGroup";
    const layoutW = required(desc, "layout", where);
    const layout = arg(layoutW, "bindGroupLayout", `${where}: layout`);
    const raw = required(desc, "entries", where);
    const n = makeNative("bindGroup", dev, desc.label);
    n.layout = layout;
    n.bytes = 0;
    n.refs = 1;
    n.buffers = null;
    n.entries = null;
    n.costBlob = null;
    const count = layout.list.length;
    const entries = new Array(count);
    const buffers = [];
    let error = null;
    const limits = dev.limits;
    if (!layout.valid) error = "layout is invalid";
    else if (layout.device !== dev) error = "layout belongs to another device";
    else if (raw.length !== count) error = `${raw.length} entries given but the layout has ${count}`;
    for (let i = 0; i < raw.length && !error; i++) {
      const e = raw[i];
      const binding = toSize(required(e, "binding", where), `${where}: binding`, 4294967295);
      const resource = required(e, "resource", where);
      const le = layout.entries.get(binding);
      if (!le) {
        error = `binding ${binding} is not in the layout`;
        break;
      }
      if (entries[le.index]) {
        error = `binding ${binding} appears twice`;
        break;
      }
      if (le.kind !== "buffer") {
        error = `binding ${binding}: ${le.kind} bindings are not emulated`;
        break;
      }
      const direct = resource[INTERNAL] && resource[INTERNAL].kind === "buffer";
      const bufW = direct ? resource : resource.buffer;
      if (!bufW || !bufW[INTERNAL] || bufW[INTERNAL].kind !== "buffer") {
        throw new TypeError(`${where}: binding ${binding} needs a GPUBuffer or GPUBufferBinding`);
      }
      const b = bufW[INTERNAL];
      const offset = direct ? 0 : toSize(resource.offset ?? 0, `${where}: offset`);
      if (!b.valid) {
        error = `binding ${binding}: buffer is invalid`;
        break;
      }
      if (b.device !== dev) {
        error = `binding ${binding}: buffer belongs to another device`;
        break;
      }
      if (offset > b.size) {
        error = `binding ${binding}: offset ${offset} > buffer size ${b.size}`;
        break;
      }
      const size = direct || resource.size === void 0 ? b.size - offset : toSize(resource.size, `${where}: size`);
      if (offset + size > b.size) {
        error = `binding ${binding}: range [${offset}, ${offset + size}) exceeds buffer size ${b.size}`;
        break;
      }
      if (size === 0) {
        error = `binding ${binding}: effective binding size is 0`;
        break;
      }
      if (le.type === "uniform") {
        if (!(b.usage & GPUBufferUsageFlags.UNIFORM)) {
          error = `binding ${binding}: buffer usage lacks UNIFORM for a uniform binding`;
          break;
        }
        if (size > limits.maxUniformBufferBindingSize) {
          error = `binding ${binding}: size ${size} > maxUniformBufferBindingSize`;
          break;
        }
        if (offset % limits.minUniformBufferOffsetAlignment) {
          error = `binding ${binding}: offset ${offset} is not a multiple of minUniformBufferOffsetAlignment`;
          break;
        }
      } else {
        if (!(b.usage & GPUBufferUsageFlags.STORAGE)) {
          error = `binding ${binding}: buffer usage lacks STORAGE for a ${le.type} binding`;
          break;
        }
        if (size > limits.maxStorageBufferBindingSize) {
          error = `binding ${binding}: size ${size} > maxStorageBufferBindingSize`;
          break;
        }
        if (size % 4) {
          error = `binding ${binding}: storage binding size ${size} is not a multiple of 4`;
          break;
        }
        if (offset % limits.minStorageBufferOffsetAlignment) {
          error = `binding ${binding}: offset ${offset} is not a multiple of minStorageBufferOffsetAlignment`;
          break;
        }
      }
      if (le.minBindingSize && size < le.minBindingSize) {
        error = `binding ${binding}: buffer binding size ${size} is smaller than the minimum binding size ${le.minBindingSize}`;
        break;
      }
      entries[le.index] = { buffer: b, offset, size };
      buffers.push(b);
    }
    if (error || dev.lost) {
      n.valid = false;
      if (error) {
        dev.ledger.bindGroupsInvalid++;
        validationError(dev, `${where}: ${error}`);
      }
    } else {
      n.entries = layout.dynamic.length ? entries : null;
      n.buffers = buffers;
      for (let i = 0; i < buffers.length; i++) buffers[i].refs++;
      n.bytes = layout.bytes;
      if (dev.model.reportCostToJs && n.bytes > 0) n.costBlob = new ArrayBuffer(n.bytes);
      dev.ledger.bindGroupAllocated(n.bytes);
      dev.budget?.charged(dev);
    }
    const w = new GPUBindGroup(CONSTRUCT, n);
    if (n.valid) registry2.register(w, n);
    return w;
  }
  var GPUComputePipeline = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    getBindGroupLayout(index) {
      const n = native(this, "computePipeline");
      const dev = n.device;
      index = toSize(index, "getBindGroupLayout index", 4294967295);
      if (index >= dev.limits.maxBindGroups) throw new RangeError(`getBindGroupLayout: index ${index} >= maxBindGroups`);
      if (!n.valid || index >= n.layout.groups.length || !n.layout.groups[index]) {
        validationError(dev, `getBindGroupLayout: ${n.valid ? `index ${index} is out of range` : "pipeline is invalid"}`);
        const [bad] = makeBindGroupLayoutNative(dev, [], "", null);
        bad.valid = false;
        return new GPUBindGroupLayout(CONSTRUCT, bad);
      }
      return new GPUBindGroupLayout(CONSTRUCT, n.layout.groups[index]);
    }
  };
  defineLabel(GPUComputePipeline);
  function buildComputePipeline(dev, desc, where) {
    const layoutArg = required(desc, "layout", where);
    const compute = required(desc, "compute", where);
    const moduleN = arg(required(compute, "module", `${where}: compute`), "shaderModule", `${where}: compute.module`);
    const n = makeNative("computePipeline", dev, desc.label);
    n.layout = { groups: [] };
    n.entryPoint = null;
    const fail = (msg) => {
      n.valid = false;
      return [n, msg];
    };
    if (!moduleN.valid) return fail("shader module is invalid");
    const eps = moduleN.reflection.entryPoints.filter((e) => e.stage === "compute");
    let ep;
    if (compute.entryPoint !== void 0 && compute.entryPoint !== null) {
      ep = eps.find((e) => e.name === String(compute.entryPoint));
      if (!ep) return fail(`entry point '${compute.entryPoint}' is not a @compute function of the module`);
    } else {
      if (eps.length !== 1) return fail(`entryPoint omitted but the module has ${eps.length} compute entry points`);
      ep = eps[0];
    }
    n.entryPoint = ep.name;
    const used = bindingsForEntryPoint(moduleN.reflection, ep.name);
    for (const r of used) {
      if (r.group === void 0 || r.binding === void 0) return fail(`variable '${r.name}' has a non-literal @group/@binding`);
      if (r.group >= dev.limits.maxBindGroups) return fail(`@group(${r.group}) >= maxBindGroups`);
      if (r.kind === "unknown") return fail(`variable '${r.name}' has an unsupported resource type`);
    }
    if (layoutArg === "auto") {
      n.isAuto = true;
      const exclusive = {};
      const groupCount = used.reduce((m, r) => Math.max(m, r.group + 1), 0);
      for (let g = 0; g < groupCount; g++) {
        const entries = used.filter((r) => r.group === g).map((r) => ({
          binding: r.binding,
          visibility: GPUShaderStageFlags.COMPUTE,
          kind: r.kind,
          type: r.kind === "buffer" ? r.type : r.type || "",
          hasDynamicOffset: false,
          minBindingSize: r.kind === "buffer" ? r.minBindingSize : 0
        }));
        const [ln, err] = makeBindGroupLayoutNative(dev, entries, "", exclusive);
        if (err) return fail(`default layout for group ${g}: ${err}`);
        n.layout.groups.push(ln);
      }
      return [n, null];
    }
    const pl = arg(layoutArg, "pipelineLayout", `${where}: layout`);
    if (!pl.valid) return fail("pipeline layout is invalid");
    n.isAuto = false;
    n.layout = pl;
    for (const r of used) {
      const g = pl.groups[r.group];
      const le = g && g.entries.get(r.binding);
      if (!le) return fail(`@group(${r.group}) @binding(${r.binding}) is not in the pipeline layout`);
      if (!(le.visibility & GPUShaderStageFlags.COMPUTE)) return fail(`@group(${r.group}) @binding(${r.binding}) is not visible to COMPUTE`);
      if (le.kind !== r.kind || r.kind === "buffer" && le.type !== r.type) {
        return fail(`@group(${r.group}) @binding(${r.binding}) is '${r.type || r.kind}' in the shader but '${le.type || le.kind}' in the layout`);
      }
      if (r.kind === "buffer" && le.minBindingSize && le.minBindingSize < r.minBindingSize) {
        return fail(`@group(${r.group}) @binding(${r.binding}): layout minBindingSize ${le.minBindingSize} < shader minimum ${r.minBindingSize}`);
      }
    }
    return [n, null];
  }
  function createComputePipeline(dev, desc) {
    const [n, err] = buildComputePipeline(dev, desc, "createComputePipeline");
    if (err) validationError(dev, `createComputePipeline: ${err}`);
    return new GPUComputePipeline(CONSTRUCT, n);
  }
  function createComputePipelineAsync(dev, desc) {
    let built;
    try {
      built = buildComputePipeline(dev, desc, "createComputePipelineAsync");
    } catch (e) {
      return Promise.reject(e);
    }
    const [n, err] = built;
    return new Promise((resolve, reject) => afterTask(() => {
      if (err) reject(new GPUPipelineError(`createComputePipelineAsync: ${err}`, { reason: "validation" }));
      else resolve(new GPUComputePipeline(CONSTRUCT, n));
    }));
  }
  var GPUQuerySet = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    get type() {
      return native(this, "querySet").type;
    }
    get count() {
      return native(this, "querySet").count;
    }
    destroy() {
      native(this, "querySet").destroyed = true;
    }
  };
  defineLabel(GPUQuerySet);
  function createQuerySet(dev, desc) {
    const where = "createQuerySet";
    const type = String(required(desc, "type", where));
    if (type !== "timestamp" && type !== "occlusion") throw new TypeError(`${where}: '${type}' is not a valid GPUQueryType`);
    const count = toSize(required(desc, "count", where), `${where}: count`, 4294967295);
    const n = makeNative("querySet", dev, desc.label);
    n.type = type;
    n.count = count;
    n.destroyed = false;
    let error = null;
    if (count > 4096) error = "count > 4096";
    else if (type === "timestamp" && !dev.features.has("timestamp-query")) error = "type 'timestamp' needs the 'timestamp-query' feature";
    if (error) {
      n.valid = false;
      validationError(dev, `${where}: ${error}`);
    }
    return new GPUQuerySet(CONSTRUCT, n);
  }

  // web/emulation/commands.js
  function newList(dev) {
    return {
      kind: "commandList",
      device: dev,
      released: false,
      held: /* @__PURE__ */ new Set(),
      // bind groups and buffers this list retains
      usedBindGroups: /* @__PURE__ */ new Set(),
      // bind groups used by a dispatch (validated at submit)
      usedBuffers: /* @__PURE__ */ new Set(),
      // buffers used by copies/clears/resolves/indirect dispatches
      commands: [],
      dispatches: 0,
      wrappers: [],
      // only with options.retainWrappersUntilDone (not what engines do)
      recorded: null
      // buffers this encoder was recorded on (model bufferRecordsEncoders)
    };
  }
  function recordUse(list, b) {
    const dev = list.device;
    if (!dev.model.bufferRecordsEncoders || list.released || !b.valid || b.state === "destroyed") return;
    if (!list.recorded) list.recorded = /* @__PURE__ */ new Set();
    if (list.recorded.has(b)) return;
    list.recorded.add(b);
    b.encoderRecords++;
    dev.ledger.encoderRecordsAdded(1);
    dev.budget?.charged(dev);
  }
  var RETAINED_BIND_GROUPS = /* @__PURE__ */ Symbol("webgpu-emulated.retainedBindGroups");
  function hold(list, n) {
    if (list.released || list.held.has(n)) return;
    list.held.add(n);
    n.refs++;
    if (n.kind === "bindGroup") list.device.ledger.bindGroupRefsHeldByWork++;
  }
  function releaseList(list) {
    if (list.released) return;
    list.released = true;
    const ledger = list.device.ledger;
    for (const n of list.held) {
      if (n.kind === "bindGroup") ledger.bindGroupRefsHeldByWork--;
      releaseRef(n);
    }
    list.held.clear();
    list.usedBindGroups.clear();
    list.usedBuffers.clear();
    list.commands = [];
    list.wrappers = [];
    list.recorded = null;
  }
  collectHandlers.commandList = (list) => releaseList(list);
  function encoderError(enc, message) {
    if (!enc.error) enc.error = message;
  }
  function encoderUsable(enc, what) {
    if (enc.state === "ended") {
      validationError(enc.device, `${what}: the command encoder is already finished`);
      return false;
    }
    if (enc.state === "locked") {
      encoderError(enc, `${what} while a pass is open`);
      return false;
    }
    return true;
  }
  var GPUCommandEncoder = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    beginComputePass(descriptor = {}) {
      const enc = native(this, "commandEncoder");
      const pass = makeNative("computePass", enc.device, descriptor?.label);
      pass.encoder = enc;
      pass.pipeline = null;
      pass.bound = [];
      pass.debugDepth = 0;
      pass.state = "open";
      if (enc.device.model.encoderRetainsBindGroups) {
        if (!this[RETAINED_BIND_GROUPS]) Object.defineProperty(this, RETAINED_BIND_GROUPS, { value: /* @__PURE__ */ new Set() });
        pass.retained = this[RETAINED_BIND_GROUPS];
      } else {
        pass.retained = null;
      }
      if (!encoderUsable(enc, "beginComputePass")) {
        pass.state = "ended";
      } else {
        enc.state = "locked";
        const tw = descriptor?.timestampWrites;
        if (tw) {
          const qs = arg(tw.querySet, "querySet", "beginComputePass: timestampWrites.querySet");
          if (!qs.valid || qs.type !== "timestamp") encoderError(enc, "timestampWrites.querySet must be a valid timestamp query set");
        }
      }
      return new GPUComputePassEncoder(CONSTRUCT, pass);
    }
    beginRenderPass() {
      throw domException("NotSupportedError", "webgpu-emulated: render passes are not emulated");
    }
    copyBufferToBuffer(source, a, b, c, d) {
      const enc = native(this, "commandEncoder");
      let srcOffset;
      let dstW;
      let dstOffset;
      let size;
      if (a != null && a[INTERNAL]) {
        srcOffset = 0;
        dstW = a;
        dstOffset = 0;
        size = b;
      } else {
        srcOffset = toSize(a, "copyBufferToBuffer sourceOffset");
        dstW = b;
        dstOffset = toSize(c, "copyBufferToBuffer destinationOffset");
        size = d;
      }
      const src = arg(source, "buffer", "copyBufferToBuffer: source");
      const dst = arg(dstW, "buffer", "copyBufferToBuffer: destination");
      size = size === void 0 ? Math.max(0, src.size - srcOffset) : toSize(size, "copyBufferToBuffer size");
      if (!encoderUsable(enc, "copyBufferToBuffer")) return;
      let error = null;
      if (!src.valid || !dst.valid) error = "source or destination buffer is invalid";
      else if (src.device !== enc.device || dst.device !== enc.device) error = "buffer belongs to another device";
      else if (!(src.usage & GPUBufferUsageFlags.COPY_SRC)) error = "source usage lacks COPY_SRC";
      else if (!(dst.usage & GPUBufferUsageFlags.COPY_DST)) error = "destination usage lacks COPY_DST";
      else if (size % 4 || srcOffset % 4 || dstOffset % 4) error = "size and offsets must be multiples of 4";
      else if (srcOffset + size > src.size) error = "source range exceeds the buffer size";
      else if (dstOffset + size > dst.size) error = "destination range exceeds the buffer size";
      else if (src === dst) error = "source and destination are the same buffer";
      if (error) {
        encoderError(enc, `copyBufferToBuffer: ${error}`);
        return;
      }
      enc.list.commands.push({ op: "copy", src, srcOffset, dst, dstOffset, size });
      useBuffer(enc.list, src);
      useBuffer(enc.list, dst);
    }
    clearBuffer(buffer, offset = 0, size = void 0) {
      const enc = native(this, "commandEncoder");
      const b = arg(buffer, "buffer", "clearBuffer: buffer");
      offset = toSize(offset, "clearBuffer offset");
      size = size === void 0 ? Math.max(0, b.size - offset) : toSize(size, "clearBuffer size");
      if (!encoderUsable(enc, "clearBuffer")) return;
      let error = null;
      if (!b.valid) error = "buffer is invalid";
      else if (!(b.usage & GPUBufferUsageFlags.COPY_DST)) error = "buffer usage lacks COPY_DST";
      else if (offset % 4 || size % 4) error = "offset and size must be multiples of 4";
      else if (offset + size > b.size) error = "range exceeds the buffer size";
      if (error) {
        encoderError(enc, `clearBuffer: ${error}`);
        return;
      }
      enc.list.commands.push({ op: "clear", dst: b, dstOffset: offset, size });
      useBuffer(enc.list, b);
    }
    resolveQuerySet(querySet, firstQuery, queryCount, destination, destinationOffset) {
      const enc = native(this, "commandEncoder");
      const qs = arg(querySet, "querySet", "resolveQuerySet: querySet");
      const dst = arg(destination, "buffer", "resolveQuerySet: destination");
      firstQuery = toSize(firstQuery, "resolveQuerySet firstQuery");
      queryCount = toSize(queryCount, "resolveQuerySet queryCount");
      destinationOffset = toSize(destinationOffset, "resolveQuerySet destinationOffset");
      if (!encoderUsable(enc, "resolveQuerySet")) return;
      let error = null;
      if (!qs.valid || !dst.valid) error = "query set or buffer is invalid";
      else if (!(dst.usage & GPUBufferUsageFlags.QUERY_RESOLVE)) error = "destination usage lacks QUERY_RESOLVE";
      else if (firstQuery + queryCount > qs.count) error = "query range exceeds the query set";
      else if (destinationOffset % 256) error = "destinationOffset is not a multiple of 256";
      else if (destinationOffset + 8 * queryCount > dst.size) error = "destination range exceeds the buffer size";
      if (error) {
        encoderError(enc, `resolveQuerySet: ${error}`);
        return;
      }
      enc.list.commands.push({ op: "clear", dst, dstOffset: destinationOffset, size: 8 * queryCount });
      enc.list.usedQuerySets = enc.list.usedQuerySets || /* @__PURE__ */ new Set();
      enc.list.usedQuerySets.add(qs);
      useBuffer(enc.list, dst);
    }
    pushDebugGroup(label) {
      const enc = native(this, "commandEncoder");
      if (encoderUsable(enc, "pushDebugGroup")) enc.debugDepth++;
      void label;
    }
    popDebugGroup() {
      const enc = native(this, "commandEncoder");
      if (!encoderUsable(enc, "popDebugGroup")) return;
      if (enc.debugDepth === 0) encoderError(enc, "popDebugGroup: no debug group is open");
      else enc.debugDepth--;
    }
    insertDebugMarker(label) {
      encoderUsable(native(this, "commandEncoder"), "insertDebugMarker");
      void label;
    }
    finish(descriptor = {}) {
      const enc = native(this, "commandEncoder");
      const dev = enc.device;
      const cb = makeNative("commandBuffer", dev, descriptor?.label);
      cb.list = null;
      cb.submitted = false;
      cb.dispatchCalls = enc.dispatchCalls;
      let error = null;
      if (enc.state === "ended") error = "the command encoder is already finished";
      else if (enc.state === "locked") error = "a pass is still open (end() was not called)";
      else if (enc.error) error = enc.error;
      else if (enc.debugDepth !== 0) error = "unbalanced pushDebugGroup";
      const wasEnded = enc.state === "ended";
      enc.state = "ended";
      if (!wasEnded) registry2.unregister(enc.token);
      const w = new GPUCommandBuffer(CONSTRUCT, cb);
      if (error) {
        cb.valid = false;
        validationError(dev, `finish: ${error}`);
        if (!wasEnded) releaseList(enc.list);
      } else {
        cb.list = enc.list;
        cb.token = {};
        registry2.register(w, cb.list, cb.token);
      }
      enc.list = null;
      return w;
    }
  };
  defineLabel(GPUCommandEncoder);
  function useBuffer(list, b) {
    list.usedBuffers.add(b);
    hold(list, b);
    recordUse(list, b);
  }
  function createCommandEncoder(dev, descriptor) {
    const enc = makeNative("commandEncoder", dev, descriptor?.label);
    enc.state = "open";
    enc.error = null;
    enc.debugDepth = 0;
    enc.dispatchCalls = 0;
    enc.list = newList(dev);
    enc.token = {};
    const w = new GPUCommandEncoder(CONSTRUCT, enc);
    registry2.register(w, enc.list, enc.token);
    return w;
  }
  function passUsable(pass, what) {
    if (pass.state !== "open" || pass.encoder.state !== "locked") {
      validationError(pass.device, `${what}: the compute pass has ended`);
      return false;
    }
    return true;
  }
  var GPUComputePassEncoder = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    setPipeline(pipeline) {
      const pass = native(this, "computePass");
      const p = arg(pipeline, "computePipeline", "setPipeline: pipeline");
      if (!passUsable(pass, "setPipeline")) return;
      if (!p.valid) {
        encoderError(pass.encoder, "setPipeline: pipeline is invalid");
        return;
      }
      if (p.device !== pass.device) {
        encoderError(pass.encoder, "setPipeline: pipeline belongs to another device");
        return;
      }
      pass.pipeline = p;
    }
    setBindGroup(index, bindGroup, dynamicOffsets = void 0, dynamicOffsetsDataStart = void 0, dynamicOffsetsDataLength = void 0) {
      const pass = native(this, "computePass");
      const dev = pass.device;
      index = toSize(index, "setBindGroup index", 4294967295);
      const bg = bindGroup === null || bindGroup === void 0 ? null : arg(bindGroup, "bindGroup", "setBindGroup: bindGroup");
      let offsets = dynamicOffsets ?? [];
      if (dynamicOffsetsDataStart !== void 0) {
        const start = toSize(dynamicOffsetsDataStart, "setBindGroup dynamicOffsetsDataStart");
        const length = toSize(dynamicOffsetsDataLength, "setBindGroup dynamicOffsetsDataLength");
        if (start + length > offsets.length) throw new RangeError("setBindGroup: dynamic offsets data range exceeds the array");
        offsets = Array.prototype.slice.call(offsets, start, start + length);
      }
      if (!passUsable(pass, "setBindGroup")) return;
      const enc = pass.encoder;
      if (index >= dev.limits.maxBindGroups) {
        encoderError(enc, `setBindGroup: index ${index} >= maxBindGroups`);
        return;
      }
      if (bg === null) {
        pass.bound[index] = null;
        return;
      }
      if (!bg.valid) {
        encoderError(enc, "setBindGroup: bind group is invalid");
        return;
      }
      if (bg.device !== dev) {
        encoderError(enc, "setBindGroup: bind group belongs to another device");
        return;
      }
      const dyn = bg.layout.dynamic;
      if (offsets.length !== dyn.length) {
        encoderError(enc, `setBindGroup: ${offsets.length} dynamic offsets given but the layout has ${dyn.length} dynamic bindings`);
        return;
      }
      for (let i = 0; i < dyn.length; i++) {
        const le = bg.layout.list[dyn[i]];
        const e = bg.entries[dyn[i]];
        const off = offsets[i] >>> 0;
        const align = le.type === "uniform" ? dev.limits.minUniformBufferOffsetAlignment : dev.limits.minStorageBufferOffsetAlignment;
        if (off % align) {
          encoderError(enc, `setBindGroup: dynamic offset ${off} is not a multiple of ${align}`);
          return;
        }
        if (e.offset + off + e.size > e.buffer.size) {
          encoderError(enc, `setBindGroup: dynamic offset ${off} puts binding ${le.binding} out of the buffer`);
          return;
        }
      }
      pass.bound[index] = bg;
      hold(enc.list, bg);
      if (dev.options.retainWrappersUntilDone && !enc.list.released) enc.list.wrappers.push(bindGroup);
      if (pass.retained) pass.retained.add(bindGroup);
    }
    /**
     * Modeled immediates (WebGPU spec "setImmediates", shipped in Chrome 149–150; references.md,
     * "Remedies engines chose"): checked and recorded, never read (no shader runs here). The data
     * range is in elements for a TypedArray, in bytes otherwise, as writeBuffer's; a range outside
     * `data` throws OperationError; an offset or size not a multiple of 4, or past the device's
     * maxImmediateSize, invalidates the encoder.
     */
    setImmediates(rangeOffset, data, dataOffset = 0, size = void 0) {
      const pass = native(this, "computePass");
      rangeOffset = toSize(rangeOffset, "setImmediates rangeOffset", 4294967295);
      const view = ArrayBuffer.isView(data) && !(data instanceof DataView);
      const elem = view ? data.BYTES_PER_ELEMENT : 1;
      const total = (view ? data.length : data?.byteLength) ?? NaN;
      if (!Number.isFinite(total)) throw new TypeError("setImmediates: data is not a BufferSource");
      dataOffset = toSize(dataOffset, "setImmediates dataOffset");
      const count = size === void 0 ? total - dataOffset : toSize(size, "setImmediates size");
      if (dataOffset > total || dataOffset + count > total) {
        throw domException("OperationError", `setImmediates: range [${dataOffset}, ${dataOffset + count}) exceeds the data (${total})`);
      }
      const bytes = count * elem;
      if (!passUsable(pass, "setImmediates")) return;
      const max = pass.device.limits.maxImmediateSize ?? 0;
      if (rangeOffset % 4 || bytes % 4) {
        encoderError(pass.encoder, `setImmediates: offset ${rangeOffset} or size ${bytes} is not a multiple of 4`);
        return;
      }
      if (rangeOffset + bytes > max) {
        encoderError(pass.encoder, `setImmediates: [${rangeOffset}, ${rangeOffset + bytes}) exceeds maxImmediateSize ${max}`);
        return;
      }
      pass.device.ledger.immediatesSet++;
    }
    dispatchWorkgroups(x, y = 1, z = 1) {
      const pass = native(this, "computePass");
      x = toSize(x, "dispatchWorkgroups x", 4294967295);
      y = toSize(y, "dispatchWorkgroups y", 4294967295);
      z = toSize(z, "dispatchWorkgroups z", 4294967295);
      pass.encoder.dispatchCalls++;
      if (!passUsable(pass, "dispatchWorkgroups")) return;
      const max = pass.device.limits.maxComputeWorkgroupsPerDimension;
      if (x > max || y > max || z > max) {
        encoderError(pass.encoder, `dispatchWorkgroups: a count exceeds maxComputeWorkgroupsPerDimension (${max})`);
        return;
      }
      validateDispatch(pass, "dispatchWorkgroups");
    }
    dispatchWorkgroupsIndirect(indirectBuffer, indirectOffset) {
      const pass = native(this, "computePass");
      const b = arg(indirectBuffer, "buffer", "dispatchWorkgroupsIndirect: indirectBuffer");
      indirectOffset = toSize(indirectOffset, "dispatchWorkgroupsIndirect indirectOffset");
      pass.encoder.dispatchCalls++;
      if (!passUsable(pass, "dispatchWorkgroupsIndirect")) return;
      let error = null;
      if (!b.valid) error = "indirect buffer is invalid";
      else if (!(b.usage & GPUBufferUsageFlags.INDIRECT)) error = "indirect buffer usage lacks INDIRECT";
      else if (indirectOffset % 4) error = "indirectOffset is not a multiple of 4";
      else if (indirectOffset + 12 > b.size) error = "indirect range exceeds the buffer size";
      if (error) {
        encoderError(pass.encoder, `dispatchWorkgroupsIndirect: ${error}`);
        return;
      }
      if (validateDispatch(pass, "dispatchWorkgroupsIndirect")) useBuffer(pass.encoder.list, b);
    }
    pushDebugGroup(label) {
      const pass = native(this, "computePass");
      if (passUsable(pass, "pushDebugGroup")) pass.debugDepth++;
      void label;
    }
    popDebugGroup() {
      const pass = native(this, "computePass");
      if (!passUsable(pass, "popDebugGroup")) return;
      if (pass.debugDepth === 0) encoderError(pass.encoder, "popDebugGroup: no debug group is open");
      else pass.debugDepth--;
    }
    insertDebugMarker(label) {
      passUsable(native(this, "computePass"), "insertDebugMarker");
      void label;
    }
    end() {
      const pass = native(this, "computePass");
      if (!passUsable(pass, "end")) return;
      pass.state = "ended";
      pass.encoder.state = "open";
      if (pass.debugDepth !== 0) encoderError(pass.encoder, "end: unbalanced pushDebugGroup in the pass");
      pass.bound = [];
      pass.pipeline = null;
    }
  };
  defineLabel(GPUComputePassEncoder);
  function validateDispatch(pass, what) {
    const enc = pass.encoder;
    const p = pass.pipeline;
    if (!p) {
      encoderError(enc, `${what}: no pipeline is set`);
      return false;
    }
    const groups = p.layout.groups;
    for (let i = 0; i < groups.length; i++) {
      const want = groups[i];
      if (!want) continue;
      const bg = pass.bound[i];
      if (!bg) {
        encoderError(enc, `${what}: no bind group is set at index ${i}`);
        return false;
      }
      if (!layoutsCompatible(bg.layout, want)) {
        encoderError(enc, `${what}: the bind group at index ${i} is not compatible with the pipeline's layout`);
        return false;
      }
    }
    const list = enc.list;
    for (let i = 0; i < groups.length; i++) {
      const bg = pass.bound[i];
      if (!bg) continue;
      list.usedBindGroups.add(bg);
      if (list.device.model.bufferRecordsEncoders) for (const b of bg.buffers) recordUse(list, b);
    }
    list.dispatches++;
    return true;
  }
  var GPUCommandBuffer = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
  };
  defineLabel(GPUCommandBuffer);
  var NativeQueue = class {
    constructor(dev) {
      this.kind = "queue";
      this.device = dev;
      this.label = "";
      this.valid = true;
      this.submitted = 0;
      this.completed = 0;
      this.inflight = [];
      this.waiters = [];
    }
    /** Promise resolved (in a later task) once work up to `serial` is done. */
    whenDone(serial) {
      return new Promise((resolve) => {
        if (serial <= this.completed) afterTask(resolve);
        else this.waiters.push({ serial, resolve });
      });
    }
    completeUpTo(serial) {
      const ledger = this.device.ledger;
      while (this.inflight.length && this.inflight[0].serial <= serial) {
        const work = this.inflight.shift();
        for (const list of work.lists) releaseList(list);
        ledger.commandBuffersInFlight -= work.lists.length;
        this.completed = work.serial;
      }
      if (serial > this.completed && serial <= this.submitted) this.completed = serial;
      const ready = this.waiters.filter((w) => w.serial <= this.completed);
      this.waiters = this.waiters.filter((w) => w.serial > this.completed);
      for (const w of ready) w.resolve(void 0);
    }
    scheduleCompletion(serial) {
      const mode = this.device.options.completion ?? "task";
      if (mode === "manual") return;
      const done = () => this.completeUpTo(serial);
      if (mode === "task") afterTask(done);
      else if (mode === "microtask") queueMicrotask(done);
      else if (typeof mode === "number") setTimeout(done, mode);
      else if (mode && typeof mode.delayMs === "number") setTimeout(done, mode.delayMs);
      else afterTask(done);
    }
  };
  function executeList(list, contentsEnabled) {
    if (!contentsEnabled) return;
    for (const c of list.commands) {
      if (c.op === "copy") {
        if (c.src.contents !== null) {
          ensureContents(c.dst).set(c.src.contents.subarray(c.srcOffset, c.srcOffset + c.size), c.dstOffset);
        } else if (c.dst.contents !== null) {
          c.dst.contents.fill(0, c.dstOffset, c.dstOffset + c.size);
        }
      } else if (c.op === "clear") {
        if (c.dst.contents !== null) c.dst.contents.fill(0, c.dstOffset, c.dstOffset + c.size);
      }
    }
  }
  var GPUQueue = class {
    constructor(token, n) {
      illegalConstructor(token);
      this[INTERNAL] = n;
    }
    submit(commandBuffers) {
      const q = native(this, "queue");
      const dev = q.device;
      if (commandBuffers == null || typeof commandBuffers[Symbol.iterator] !== "function") {
        throw new TypeError("submit: commandBuffers is not a sequence");
      }
      const cbs = [];
      for (const w of commandBuffers) cbs.push(arg(w, "commandBuffer", "submit: element"));
      let error = null;
      const seen = /* @__PURE__ */ new Set();
      for (const cb of cbs) {
        if (seen.has(cb)) {
          error = "the same command buffer appears twice";
          break;
        }
        seen.add(cb);
        if (cb.submitted) {
          error = "a command buffer was already submitted";
          break;
        }
        if (!cb.valid) {
          error = "a command buffer is invalid";
          break;
        }
        if (cb.device !== dev) {
          error = "a command buffer belongs to another device";
          break;
        }
        error = checkBuffersAvailable(cb.list);
        if (error) break;
      }
      for (const cb of cbs) {
        if (cb.token) registry2.unregister(cb.token);
        cb.valid = false;
        cb.submitted = true;
      }
      const lists = cbs.map((cb) => cb.list).filter(Boolean);
      for (const cb of cbs) cb.list = null;
      if (error) {
        for (const list of lists) releaseList(list);
        dev.ledger.commandBuffersRejected += cbs.length;
        for (const cb of cbs) dev.ledger.dispatchesDropped += cb.dispatchCalls ?? 0;
        validationError(dev, `submit: ${error}`);
        return;
      }
      if (dev.lost) {
        for (const list of lists) releaseList(list);
        return;
      }
      const contentsEnabled = dev.options.contents !== "none";
      for (const list of lists) executeList(list, contentsEnabled);
      const serial = ++q.submitted;
      q.inflight.push({ serial, lists });
      dev.ledger.submits++;
      dev.ledger.commandBuffersInFlight += lists.length;
      q.scheduleCompletion(serial);
    }
    writeBuffer(buffer, bufferOffset, data, dataOffset = 0, size = void 0) {
      const q = native(this, "queue");
      const dev = q.device;
      const b = arg(buffer, "buffer", "writeBuffer: buffer");
      bufferOffset = toSize(bufferOffset, "writeBuffer bufferOffset");
      let bytes;
      let elementSize = 1;
      if (data instanceof ArrayBuffer || typeof SharedArrayBuffer === "function" && data instanceof SharedArrayBuffer) {
        bytes = new Uint8Array(data);
      } else if (ArrayBuffer.isView(data)) {
        bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        if (!(data instanceof DataView)) elementSize = data.BYTES_PER_ELEMENT;
      } else {
        throw new TypeError("writeBuffer: data is not an ArrayBuffer or ArrayBufferView");
      }
      const dataLength = bytes.byteLength / elementSize;
      dataOffset = toSize(dataOffset, "writeBuffer dataOffset");
      if (dataOffset > dataLength) throw domException("OperationError", "writeBuffer: dataOffset is past the end of data");
      const count = size === void 0 ? dataLength - dataOffset : toSize(size, "writeBuffer size");
      if (dataOffset + count > dataLength) throw domException("OperationError", "writeBuffer: dataOffset + size exceeds data");
      const byteCount = count * elementSize;
      if (byteCount % 4) throw domException("OperationError", "writeBuffer: size in bytes is not a multiple of 4");
      let error = null;
      if (!b.valid) error = "buffer is invalid";
      else if (b.device !== dev) error = "buffer belongs to another device";
      else if (b.state !== "available") error = b.state === "destroyed" ? "buffer is destroyed" : "buffer is mapped or has a pending map";
      else if (!(b.usage & GPUBufferUsageFlags.COPY_DST)) error = "buffer usage lacks COPY_DST";
      else if (bufferOffset % 4) error = "bufferOffset is not a multiple of 4";
      else if (bufferOffset + byteCount > b.size) error = "write range exceeds the buffer size";
      if (error) {
        validationError(dev, `writeBuffer: ${error}`);
        return;
      }
      if (dev.lost || byteCount === 0 || dev.options.contents === "none") return;
      const start = dataOffset * elementSize;
      ensureContents(b).set(bytes.subarray(start, start + byteCount), bufferOffset);
    }
    writeTexture() {
      throw domException("NotSupportedError", "webgpu-emulated: textures are not emulated");
    }
    copyExternalImageToTexture() {
      throw domException("NotSupportedError", "webgpu-emulated: textures are not emulated");
    }
    onSubmittedWorkDone() {
      const q = native(this, "queue");
      return q.whenDone(q.submitted);
    }
  };
  defineLabel(GPUQueue);
  function checkBuffersAvailable(list) {
    for (const b of list.usedBuffers) {
      if (b.state === "destroyed") return "a buffer used by the command buffer is destroyed";
      if (b.state !== "available") return "a buffer used by the command buffer is mapped";
    }
    for (const bg of list.usedBindGroups) {
      for (const b of bg.buffers) {
        if (b.state === "destroyed") return "a buffer in a bind group used by the command buffer is destroyed";
        if (b.state !== "available") return "a buffer in a bind group used by the command buffer is mapped";
      }
    }
    if (list.usedQuerySets) {
      for (const qs of list.usedQuerySets) if (qs.destroyed) return "a query set used by the command buffer is destroyed";
    }
    return null;
  }

  // web/emulation/memory-budget.js
  var AT_MEMORY_BUDGET = Object.freeze(["lose-device", "kill-page", "out-of-memory"]);
  var MemoryBudget = class _MemoryBudget {
    /**
     * @param {object} options installEmulatedWebGPU options (memoryBudgetBytes, atMemoryBudget, onKillPage)
     * @param {(dev: object, reason: string, message: string) => void} loseDevice how a device
     *   native is lost (webgpu-emulated.js), passed in so this module imports nothing
     * @returns {MemoryBudget | null}
     * @throws {TypeError} on a negative or non-integer budget or an unknown atMemoryBudget
     */
    static from(options, loseDevice2) {
      const bytes = options.memoryBudgetBytes ?? 0;
      if (!Number.isSafeInteger(bytes) || bytes < 0) throw new TypeError(`memoryBudgetBytes must be a non-negative integer (got ${bytes})`);
      const at = options.atMemoryBudget ?? "lose-device";
      if (!AT_MEMORY_BUDGET.includes(at)) throw new TypeError(`atMemoryBudget must be one of ${AT_MEMORY_BUDGET.join(", ")} (got ${at})`);
      if (options.onKillPage !== void 0 && typeof options.onKillPage !== "function") throw new TypeError("onKillPage must be a function");
      return bytes > 0 ? new _MemoryBudget(bytes, at, options.onKillPage ?? null, loseDevice2) : null;
    }
    constructor(budgetBytes, atBudget, onKillPage, loseDevice2) {
      this.budgetBytes = budgetBytes;
      this.atBudget = atBudget;
      this.onKillPage = onKillPage;
      this.loseDevice = loseDevice2;
      this.devices = /* @__PURE__ */ new Set();
      this.trips = [];
      this.killed = false;
    }
    register(dev) {
      this.devices.add(dev);
    }
    /** Modeled bytes of every device of the page: bind groups + buffers (+ encoder records). */
    modeledBytes() {
      let total = 0;
      for (const dev of this.devices) total += dev.ledger.modeledNativeBytes + dev.ledger.modeledBufferBytes;
      return total;
    }
    /**
     * Called after each charge to a ledger of `dev`. Over the budget: every device not yet lost
     * is lost ('lose-device'), or the page is killed ('kill-page': throws an Error whose name is
     * 'EmulatedPageKilled' out of the allocating call).
     */
    /**
     * 'out-of-memory' only: would allocating `bytes` more take the page's modeled bytes past the
     * budget? Then the allocation is refused (createBuffer, resources.js): the refusal is
     * recorded as a trip and true is returned; the caller generates the GPUOutOfMemoryError.
     */
    refuses(dev, bytes) {
      if (this.atBudget !== "out-of-memory") return false;
      const modeled = this.modeledBytes();
      if (modeled + bytes <= this.budgetBytes) return false;
      this.trips.push({
        modeledBytes: modeled,
        budgetBytes: this.budgetBytes,
        atBudget: this.atBudget,
        message: `createBuffer of ${bytes} bytes refused on ${dev.label || "a device"}`
      });
      return true;
    }
    charged(dev) {
      if (this.atBudget === "out-of-memory") return;
      if (this.killed) throw pageKilledError("the page was already killed at its memory budget");
      const modeled = this.modeledBytes();
      if (modeled <= this.budgetBytes) return;
      const live2 = [...this.devices].filter((d) => !d.lost);
      if (!live2.length) return;
      const message = `webgpu-emulated ${this.atBudget} at the memory budget: modeled ${modeled} bytes > ${this.budgetBytes} bytes (bind groups + buffers of ${this.devices.size} device(s), on ${dev.label || "a device"})`;
      const trip = { modeledBytes: modeled, budgetBytes: this.budgetBytes, atBudget: this.atBudget, message };
      this.trips.push(trip);
      if (this.atBudget === "lose-device") {
        for (const d of live2) this.loseDevice(d, "unknown", message);
        return;
      }
      this.killed = true;
      for (const d of live2) this.loseDevice(d, null, message);
      if (this.onKillPage) this.onKillPage({ ...trip });
      throw pageKilledError(message);
    }
    snapshot() {
      return { budgetBytes: this.budgetBytes, atBudget: this.atBudget, trips: this.trips.length, killed: this.killed };
    }
  };
  function pageKilledError(message) {
    const e = new Error(message);
    e.name = "EmulatedPageKilled";
    return e;
  }

  // web/emulation/webgpu-emulated.js
  function defineSetLike(Class) {
    const p = Class.prototype;
    const set = (o) => o[INTERNAL].set;
    Object.defineProperties(p, {
      size: { get() {
        return set(this).size;
      }, enumerable: true, configurable: true },
      has: { value(k) {
        return set(this).has(k);
      }, writable: true, configurable: true },
      keys: { value() {
        return set(this).values();
      }, writable: true, configurable: true },
      values: { value() {
        return set(this).values();
      }, writable: true, configurable: true },
      entries: { value() {
        return set(this).entries();
      }, writable: true, configurable: true },
      forEach: {
        value(cb, thisArg) {
          for (const v of set(this)) cb.call(thisArg, v, v, this);
        },
        writable: true,
        configurable: true
      },
      [Symbol.iterator]: { value() {
        return set(this).values();
      }, writable: true, configurable: true }
    });
  }
  var GPUSupportedFeatures = class {
    constructor(token, names) {
      illegalConstructor(token);
      this[INTERNAL] = { set: new Set(names) };
    }
  };
  defineSetLike(GPUSupportedFeatures);
  var WGSLLanguageFeatures = class {
    constructor(token, names) {
      illegalConstructor(token);
      this[INTERNAL] = { set: new Set(names) };
    }
  };
  defineSetLike(WGSLLanguageFeatures);
  var GPUSupportedLimits = class {
    constructor(token, values) {
      illegalConstructor(token);
      this[INTERNAL] = Object.freeze({ ...values });
    }
  };
  for (const name of Object.keys(DEFAULT_LIMITS)) {
    Object.defineProperty(GPUSupportedLimits.prototype, name, {
      get() {
        return this[INTERNAL][name];
      },
      enumerable: true,
      configurable: true
    });
  }
  var GPUAdapterInfo = class {
    constructor(token, info) {
      illegalConstructor(token);
      this[INTERNAL] = Object.freeze({ ...info });
    }
  };
  for (const name of ["vendor", "architecture", "device", "description", "subgroupMinSize", "subgroupMaxSize", "isFallbackAdapter"]) {
    Object.defineProperty(GPUAdapterInfo.prototype, name, {
      get() {
        return this[INTERNAL][name];
      },
      enumerable: true,
      configurable: true
    });
  }
  var ADAPTER_INFO = {
    vendor: "webgpu-harness",
    architecture: "emulated",
    device: "",
    description: "emulated WebGPU (modeled native memory)",
    subgroupMinSize: 4,
    subgroupMaxSize: 128,
    isFallbackAdapter: false
  };
  var WGSL_FEATURES = [
    "readonly_and_readwrite_storage_textures",
    "packed_4x8_integer_dot_product",
    "unrestricted_pointer_parameters",
    "pointer_composite_access"
  ];
  function resolveLimits(spec) {
    if (spec === void 0 || spec === null) return { ...DEFAULT_LIMITS };
    if (typeof spec === "string") {
      if (!LIMIT_PRESETS[spec]) throw new TypeError(`limits: unknown preset '${spec}' (${Object.keys(LIMIT_PRESETS).join(", ")})`);
      return { ...LIMIT_PRESETS[spec] };
    }
    for (const key of Object.keys(spec)) if (!(key in DEFAULT_LIMITS)) throw new TypeError(`limits: unknown limit '${key}'`);
    return { ...DEFAULT_LIMITS, ...spec };
  }
  var GPU = class {
    constructor(token, options) {
      illegalConstructor(token);
      this[INTERNAL] = {
        kind: "gpu",
        options,
        wgsl: new WGSLLanguageFeatures(CONSTRUCT, WGSL_FEATURES),
        budget: MemoryBudget.from(options, loseDevice)
        // one page: every device of this GPU
      };
    }
    requestAdapter(options = {}) {
      const g = native(this, "gpu");
      void options;
      return new Promise((resolve) => afterTask(() => resolve(new GPUAdapter(CONSTRUCT, g.options, g.budget))));
    }
    getPreferredCanvasFormat() {
      return "bgra8unorm";
    }
    get wgslLanguageFeatures() {
      return native(this, "gpu").wgsl;
    }
  };
  var GPUAdapter = class {
    constructor(token, options, budget = null) {
      illegalConstructor(token);
      const limits = resolveLimits(options.limits);
      const features = new Set(options.features ?? ["shader-f16"]);
      this[INTERNAL] = {
        kind: "adapter",
        options,
        budget,
        consumed: false,
        limitValues: limits,
        features: new GPUSupportedFeatures(CONSTRUCT, features),
        limits: new GPUSupportedLimits(CONSTRUCT, limits),
        info: new GPUAdapterInfo(CONSTRUCT, { ...ADAPTER_INFO, ...options.adapterInfo || {} })
      };
    }
    get features() {
      return native(this, "adapter").features;
    }
    get limits() {
      return native(this, "adapter").limits;
    }
    get info() {
      return native(this, "adapter").info;
    }
    requestDevice(descriptor = {}) {
      const a = native(this, "adapter");
      const desc = descriptor ?? {};
      return new Promise((resolve, reject) => afterTask(() => {
        const required2 = [...desc.requiredFeatures ?? []].map(String);
        for (const f of required2) {
          if (!a.features.has(f)) {
            reject(new TypeError(`requestDevice: feature '${f}' is not supported by the adapter`));
            return;
          }
        }
        if (a.consumed) {
          reject(domException("OperationError", "requestDevice: the adapter was already consumed"));
          return;
        }
        const limits = { ...DEFAULT_LIMITS };
        for (const [key, value] of Object.entries(desc.requiredLimits ?? {})) {
          if (value === void 0) continue;
          if (!(key in DEFAULT_LIMITS)) {
            reject(domException("OperationError", `requestDevice: unknown limit '${key}'`));
            return;
          }
          const v = Number(value);
          const adapterValue = a.limitValues[key];
          if (ALIGNMENT_LIMITS.has(key)) {
            if (v < adapterValue || (v & v - 1) !== 0) {
              reject(domException("OperationError", `requestDevice: ${key}=${v} is not supported`));
              return;
            }
            limits[key] = Math.min(limits[key], v);
          } else {
            if (v > adapterValue) {
              reject(domException("OperationError", `requestDevice: ${key}=${v} exceeds the adapter limit ${adapterValue}`));
              return;
            }
            limits[key] = Math.max(limits[key], v);
          }
        }
        a.consumed = true;
        resolve(new GPUDevice(CONSTRUCT, a, desc, limits, new Set(required2)));
      }));
    }
  };
  var EventTargetBase = typeof EventTarget === "function" ? EventTarget : class {
  };
  var GPUDevice = class extends EventTargetBase {
    constructor(token, adapter, desc, limits, features) {
      illegalConstructor(token);
      super();
      const options = adapter.options;
      const model = resolveModel(options);
      const dev = makeNative("device", null, desc.label);
      dev.options = options;
      dev.model = model;
      dev.ledger = new Ledger(model);
      dev.limits = Object.freeze(limits);
      dev.features = features;
      dev.errorScopes = [];
      dev.lost = false;
      dev.eventTarget = this;
      dev.liveBuffers = /* @__PURE__ */ new Set();
      dev.adapterInfo = adapter.info;
      dev.featuresObject = new GPUSupportedFeatures(CONSTRUCT, features);
      dev.limitsObject = new GPUSupportedLimits(CONSTRUCT, limits);
      dev.queue = new NativeQueue(dev);
      dev.queueWrapper = new GPUQueue(CONSTRUCT, dev.queue);
      dev.queue.label = desc.defaultQueue?.label ?? "";
      dev.lostPromise = new Promise((resolve) => {
        dev.resolveLost = resolve;
      });
      dev.onuncapturederror = null;
      dev.budget = adapter.budget;
      dev.budget?.register(dev);
      this[INTERNAL] = dev;
    }
    get features() {
      return native(this, "device").featuresObject;
    }
    get limits() {
      return native(this, "device").limitsObject;
    }
    get adapterInfo() {
      return native(this, "device").adapterInfo;
    }
    get queue() {
      return native(this, "device").queueWrapper;
    }
    get lost() {
      return native(this, "device").lostPromise;
    }
    get onuncapturederror() {
      return native(this, "device").onuncapturederror;
    }
    set onuncapturederror(handler) {
      const dev = native(this, "device");
      if (dev.onuncapturederrorListener) this.removeEventListener("uncapturederror", dev.onuncapturederrorListener);
      dev.onuncapturederror = typeof handler === "function" ? handler : null;
      dev.onuncapturederrorListener = null;
      if (dev.onuncapturederror) {
        dev.onuncapturederrorListener = (e) => dev.onuncapturederror.call(this, e);
        this.addEventListener("uncapturederror", dev.onuncapturederrorListener);
      }
    }
    /** The live memory ledger (harness hook; not part of WebGPU). */
    get __harnessLedger() {
      return native(this, "device").ledger;
    }
    destroy() {
      loseDevice(native(this, "device"), "destroyed", "device.destroy() was called");
    }
    createBuffer(descriptor) {
      return createBuffer(native(this, "device"), descriptor);
    }
    createShaderModule(descriptor) {
      return createShaderModule(native(this, "device"), descriptor);
    }
    createBindGroupLayout(descriptor) {
      return createBindGroupLayout(native(this, "device"), descriptor);
    }
    createPipelineLayout(descriptor) {
      return createPipelineLayout(native(this, "device"), descriptor);
    }
    createBindGroup(descriptor) {
      return createBindGroup(native(this, "device"), descriptor);
    }
    createComputePipeline(descriptor) {
      return createComputePipeline(native(this, "device"), descriptor);
    }
    createComputePipelineAsync(descriptor) {
      return createComputePipelineAsync(native(this, "device"), descriptor);
    }
    createCommandEncoder(descriptor = {}) {
      return createCommandEncoder(native(this, "device"), descriptor);
    }
    createQuerySet(descriptor) {
      return createQuerySet(native(this, "device"), descriptor);
    }
    pushErrorScope(filter) {
      pushErrorScope(native(this, "device"), String(filter));
    }
    popErrorScope() {
      let dev;
      try {
        dev = native(this, "device");
      } catch (e) {
        return Promise.reject(e);
      }
      return popErrorScope(dev);
    }
    createTexture() {
      throw notEmulated("createTexture");
    }
    createSampler() {
      throw notEmulated("createSampler");
    }
    importExternalTexture() {
      throw notEmulated("importExternalTexture");
    }
    createRenderPipeline() {
      throw notEmulated("createRenderPipeline");
    }
    createRenderPipelineAsync() {
      return Promise.reject(notEmulated("createRenderPipelineAsync"));
    }
    createRenderBundleEncoder() {
      throw notEmulated("createRenderBundleEncoder");
    }
  };
  defineLabel(GPUDevice);
  function loseDevice(dev, reason, message) {
    if (dev.lost) return;
    for (const b of [...dev.liveBuffers]) destroyBufferNative(b);
    dev.queue.completeUpTo(dev.queue.submitted);
    dev.lost = true;
    if (reason === null) return;
    const info = new GPUDeviceLostInfo(INTERNAL, reason, message);
    afterTask(() => dev.resolveLost(info));
  }
  function notEmulated(what) {
    return domException("NotSupportedError", `webgpu-emulated: ${what} is not emulated (compute subset only)`);
  }
  function createEmulatedGPU(options = {}) {
    resolveModel(options);
    resolveLimits(options.limits);
    MemoryBudget.from(options, loseDevice);
    return new GPU(CONSTRUCT, { ...options });
  }
  function emulationStats(device) {
    const dev = native(device, "device");
    return { ...dev.ledger.snapshot(), memoryBudget: dev.budget ? dev.budget.snapshot() : null, lost: dev.lost };
  }
  var classes = Object.freeze({
    GPU,
    GPUAdapter,
    GPUAdapterInfo,
    GPUSupportedLimits,
    GPUSupportedFeatures,
    WGSLLanguageFeatures,
    GPUDevice,
    GPUQueue,
    GPUBuffer,
    GPUShaderModule,
    GPUCompilationInfo,
    GPUCompilationMessage,
    GPUComputePipeline,
    GPUBindGroupLayout,
    GPUPipelineLayout,
    GPUBindGroup,
    GPUCommandEncoder,
    GPUComputePassEncoder,
    GPUCommandBuffer,
    GPUQuerySet,
    GPUError,
    GPUValidationError,
    GPUOutOfMemoryError,
    GPUInternalError,
    GPUPipelineError,
    GPUUncapturedErrorEvent,
    GPUDeviceLostInfo
  });
  var CONSTANTS = {
    GPUBufferUsage: GPUBufferUsageFlags,
    GPUMapMode: GPUMapModeFlags,
    GPUShaderStage: GPUShaderStageFlags,
    GPUTextureUsage: GPUTextureUsageFlags
  };
  function installEmulatedWebGPU(globalObj = globalThis, options = {}) {
    const gpu = createEmulatedGPU(options);
    const restore = [];
    const define = (obj, name, value) => {
      const previous = Object.getOwnPropertyDescriptor(obj, name);
      restore.push(() => {
        if (previous) Object.defineProperty(obj, name, previous);
        else delete obj[name];
      });
      Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
    };
    for (const [name, value] of Object.entries(classes)) define(globalObj, name, value);
    for (const [name, value] of Object.entries(CONSTANTS)) if (globalObj[name] === void 0) define(globalObj, name, value);
    if (globalObj.navigator && (typeof globalObj.navigator === "object" || typeof globalObj.navigator === "function")) {
      define(globalObj.navigator, "gpu", gpu);
    } else {
      define(globalObj, "navigator", { gpu });
    }
    return {
      gpu,
      classes,
      uninstall() {
        while (restore.length) restore.pop()();
      }
    };
  }

  // web/inject/transport.js
  var SAMPLE_PATH = "/__webgpu_harness__/samples";
  var RELAY_CHANNEL = "__webgpu_harness__";
  var MAX_BATCH = 32;
  var MAX_DELAY_MS = 100;
  var Transport = class {
    /**
     * @param scope the realm's global object
     * @param realm {id, kind, url, script_type} attached to every sample
     * @param originals functions captured before app code ran ({fetch, setTimeout, BroadcastChannel})
     */
    constructor(scope, realm, originals) {
      this.scope = scope;
      this.realm = realm;
      this.o = originals;
      this.queue = [];
      this.timer = null;
      this.lastSend = 0;
      this.chain = Promise.resolve();
      this.sent = 0;
      this.n = 0;
      this.failed = 0;
      this.relayed = 0;
      try {
        this.url = new URL(SAMPLE_PATH, scope.origin && scope.origin !== "null" ? scope.origin : scope.location.href).href;
      } catch {
        this.url = null;
      }
      this.channel = null;
      this.relayTarget = false;
    }
    /** Queue one sample object (must have `kind`). */
    post(sample) {
      this.queue.push({ t_ms: this.scope.performance.now(), ...sample, realm: this.realm.id, n: ++this.n });
      const now = this.scope.performance.now();
      if (this.queue.length >= MAX_BATCH || now - this.lastSend >= MAX_DELAY_MS) this.flush();
      else if (this.timer === null) this.timer = this.o.setTimeout.call(this.scope, () => this.flush(), MAX_DELAY_MS);
    }
    /** Send what is queued; resolves when the server answered (or the relay took it). */
    flush() {
      if (this.timer !== null) {
        this.o.clearTimeout.call(this.scope, this.timer);
        this.timer = null;
      }
      if (!this.queue.length) return this.chain;
      const batch = this.queue;
      this.queue = [];
      this.lastSend = this.scope.performance.now();
      const body = JSON.stringify({ token: this.o.token, samples: batch });
      this.chain = this.chain.then(() => this.send(body, batch.length));
      return this.chain;
    }
    async send(body, n) {
      const sender = this.scope.__webgpuHarnessSend;
      if (typeof sender === "function") {
        try {
          sender(body);
          this.sent += n;
          return;
        } catch {
        }
      }
      try {
        if (this.url === null) throw new Error("no same-origin URL");
        const r = await this.o.fetch.call(this.scope, this.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          keepalive: body.length < 6e4,
          credentials: "omit",
          cache: "no-store"
        });
        if (r.ok) {
          this.sent += n;
          return;
        }
      } catch {
      }
      this.relay(body, n);
    }
    relay(body, n) {
      if (this.relayTarget) {
        this.failed += n;
        return;
      }
      try {
        this.channel ?? (this.channel = new this.o.BroadcastChannel(RELAY_CHANNEL));
        this.channel.postMessage({ webgpuHarnessBatch: body });
        this.relayed += n;
      } catch {
        this.failed += n;
      }
    }
    /** Page realms: forward batches that workers relayed (see relay()). */
    listenForRelays() {
      if (typeof this.o.BroadcastChannel !== "function") return;
      this.relayTarget = true;
      const ch = new this.o.BroadcastChannel(RELAY_CHANNEL);
      ch.onmessage = (e) => {
        const body = e.data?.webgpuHarnessBatch;
        if (typeof body === "string") this.chain = this.chain.then(() => this.send(body, 0));
      };
    }
  };

  // web/inject/steps.js
  function parseStepOn(spec = "mapAsync") {
    const s = String(spec);
    let m;
    if (s === "mapAsync") return { kind: "mapAsync", every: 1, spec: s };
    if ((m = /^mapAsync:(\d+)$/.exec(s)) && Number(m[1]) >= 1) return { kind: "mapAsync", every: Number(m[1]), spec: s };
    if (m = /^mark:(.+)$/.exec(s)) return { kind: "mark", name: m[1], spec: s };
    if (m = /^console:(.+)$/.exec(s)) return { kind: "console", regex: new RegExp(m[1]), spec: s };
    if ((m = /^interval:(\d+(?:\.\d+)?)$/.exec(s)) && Number(m[1]) > 0) return { kind: "interval", ms: Number(m[1]), spec: s };
    throw new Error(`step-on must be mapAsync, mapAsync:N, mark:NAME, console:REGEX or interval:MS, got ${JSON.stringify(s)}`);
  }
  var StepRecorder = class {
    /**
     * @param post function(sample)
     * @param stepOn parsed spec (parseStepOn)
     * @param emulationStats null or () => {...} of the realm's emulated devices
     * @param now () => ms (performance.now of the realm)
     */
    constructor(post, stepOn, emulationStats2, now) {
      this.post = post;
      this.stepOn = stepOn;
      this.emulationStats = emulationStats2;
      this.now = now;
      this.step = 0;
      this.before = snapshot();
      this.t0 = now();
      this.reported = this.before;
      timing.lastSubmitEndMs = null;
      takeCreatedBuffers();
    }
    /** Whether calls were counted since the last step or open_step sample. */
    changed() {
      for (const name of COUNTER_NAMES) if (counts[name] !== this.reported[name]) return true;
      return false;
    }
    /**
     * Post an `open_step` sample: the calls counted so far in the step still open (deltas since
     * its start, like a step's), without ending it. Lets the harness place the calls of a realm
     * that ends few or no steps of its own on the measured realm's steps by time. Posts nothing
     * when no call was counted since the last step or open_step sample; returns whether it posted.
     */
    openSnapshot(why) {
      if (!this.changed()) return false;
      const deltas = {};
      for (const name of COUNTER_NAMES) if (counts[name] !== this.before[name]) deltas[name] = counts[name] - this.before[name];
      const sample = {
        kind: "open_step",
        step: this.step,
        wall_ms: this.now() - this.t0,
        counters: deltas,
        live: liveSnapshot(),
        extra: { why }
      };
      if (this.emulationStats) sample.emulation = this.emulationStats();
      this.reported = snapshot();
      this.post(sample);
      return true;
    }
    /** End the open step now and open the next one. Returns the sample posted. */
    boundary(trigger) {
      const t1 = this.now();
      const deltas = {};
      for (const name of COUNTER_NAMES) deltas[name] = counts[name] - this.before[name];
      const sample = {
        kind: "step",
        step: this.step,
        token: null,
        logits_hash: null,
        cpu_ms: timing.lastSubmitEndMs === null ? null : Math.max(0, timing.lastSubmitEndMs - this.t0),
        wall_ms: t1 - this.t0,
        counters: deltas,
        live: liveSnapshot(),
        extra: { step_on: this.stepOn.spec, trigger },
        created_buffers: takeCreatedBuffers()
      };
      if (this.emulationStats) sample.emulation = this.emulationStats();
      this.step += 1;
      this.before = snapshot();
      this.reported = this.before;
      this.t0 = t1;
      timing.lastSubmitEndMs = null;
      this.post(sample);
      return sample;
    }
  };
  function rewrap(proto, method, make) {
    const original = proto?.[method];
    if (typeof original !== "function") return false;
    Object.defineProperty(proto, method, { value: make(original), writable: true, configurable: true });
    return true;
  }
  function installStepTrigger(scope, recorder, o, hasDevice) {
    const spec = recorder.stepOn;
    if (spec.kind === "mapAsync") {
      let resolved = 0;
      const ok = rewrap(scope.GPUBuffer?.prototype, "mapAsync", (inner) => function(...args) {
        const p = inner.apply(this, args);
        if (p && typeof p.then === "function") {
          p.then(() => {
            resolved += 1;
            if (resolved % spec.every === 0) recorder.boundary("mapAsync");
          }, () => {
          });
        }
        return p;
      });
      return ok ? "GPUBuffer.mapAsync" : null;
    }
    if (spec.kind === "mark") {
      const ok = rewrap(scope.Performance?.prototype, "mark", (inner) => function(name, ...rest) {
        const r = inner.call(this, name, ...rest);
        if (String(name) === spec.name) recorder.boundary(`mark:${spec.name}`);
        return r;
      });
      return ok ? "Performance.mark" : null;
    }
    if (spec.kind === "console") {
      const c = scope.console;
      if (!c) return null;
      for (const level of ["log", "info", "warn", "error", "debug"]) {
        const inner = c[level];
        if (typeof inner !== "function") continue;
        c[level] = function(...args) {
          const r = inner.apply(this, args);
          let text = "";
          try {
            text = args.map((a) => typeof a === "string" ? a : String(a)).join(" ");
          } catch {
            text = "";
          }
          if (spec.regex.test(text)) recorder.boundary(`console.${level}`);
          return r;
        };
      }
      return "console";
    }
    if (spec.kind === "interval") {
      o.setInterval.call(scope, () => {
        if (hasDevice()) recorder.boundary("interval");
      }, spec.ms);
      return "setInterval";
    }
    return null;
  }

  // web/inject/workers.js
  var BOOTSTRAP_PATH = "/__webgpu_harness__/bootstrap.js";
  var REGISTER_PATH = "/__webgpu_harness__/worker";
  function randomId() {
    return Math.random().toString(16).slice(2, 10);
  }
  function bootstrapQuery(hints) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(hints)) if (v !== void 0 && v !== null) q.set(k, String(v));
    return `?${q}`;
  }
  function bootstrapPrefix(type, url) {
    return type === "module" ? `import ${JSON.stringify(url)};` : `importScripts(${JSON.stringify(url)});`;
  }
  function readSync(o, url) {
    const xhr = new o.XMLHttpRequest();
    xhr.open("GET", url, false);
    xhr.overrideMimeType("text/plain; charset=utf-8");
    xhr.send();
    if (xhr.status !== 200 && xhr.status !== 0) throw new Error(`HTTP ${xhr.status}`);
    return xhr.responseText;
  }
  function registerSync(o, origin, entry) {
    const xhr = new o.XMLHttpRequest();
    xhr.open("POST", new URL(REGISTER_PATH, origin).href, false);
    xhr.setRequestHeader("content-type", "application/json");
    xhr.send(JSON.stringify({ ...entry, token: o.token }));
    return xhr.status >= 200 && xhr.status < 300;
  }
  function wrapWorkers(scope, post, o) {
    const origin = scope.origin;
    const base = () => scope.location.href;
    const blobs = /* @__PURE__ */ new Map();
    const URLCtor = scope.URL;
    if (URLCtor && typeof o.createObjectURL === "function") {
      URLCtor.createObjectURL = function(obj) {
        const url = o.createObjectURL.call(this, obj);
        if (obj instanceof o.Blob) blobs.set(url, obj);
        return url;
      };
      URLCtor.revokeObjectURL = function(url) {
        blobs.delete(String(url));
        return o.revokeObjectURL.call(this, url);
      };
    }
    function prepare(workerKind, url, type) {
      const record = {
        kind: "worker",
        worker_id: randomId(),
        worker_kind: workerKind,
        url: String(url),
        script_type: type,
        via: null,
        instrumented: null
      };
      let abs;
      try {
        abs = new o.URL(String(url), base());
      } catch {
        return { record: null, url };
      }
      record.url = abs.href;
      const hints = { kind: workerKind, type, wid: record.worker_id };
      if (abs.protocol === "blob:") {
        try {
          const source = blobs.get(abs.href) ?? readSync(o, abs.href);
          hints.created_url = abs.href;
          const boot = new o.URL(BOOTSTRAP_PATH + bootstrapQuery(hints), origin).href;
          const blob = new o.Blob([`${bootstrapPrefix(type, boot)}
`, source], { type: "text/javascript" });
          const replaced = o.createObjectURL.call(o.URL, blob);
          o.setTimeout.call(scope, () => o.revokeObjectURL.call(o.URL, replaced), 6e4);
          record.via = "blob";
          return { record, url: replaced };
        } catch (err) {
          Object.assign(record, { instrumented: false, reason: `could not read the blob: URL (made in another realm): ${err?.message ?? err}` });
          return { record, url };
        }
      }
      if ((abs.protocol === "http:" || abs.protocol === "https:") && abs.origin === origin) {
        let ok = false;
        try {
          ok = registerSync(o, origin, { url: abs.href, type, kind: workerKind, wid: record.worker_id });
        } catch {
          ok = false;
        }
        record.via = ok ? "url" : "url-unregistered";
        return { record, url };
      }
      Object.assign(record, {
        instrumented: false,
        reason: abs.protocol === "data:" ? "data: URL worker (opaque origin)" : "cross-origin worker script"
      });
      return { record, url };
    }
    for (const [name, workerKind] of [["Worker", "worker"], ["SharedWorker", "sharedworker"]]) {
      const Native = scope[name];
      if (typeof Native !== "function") continue;
      const wrapped = new Proxy(Native, {
        construct(target, args, newTarget) {
          const opts = args[1];
          const type = opts && typeof opts === "object" && opts.type === "module" ? "module" : "classic";
          const { record, url } = prepare(workerKind, args[0], type);
          if (record) post(record);
          const newArgs = [url, ...args.slice(1)];
          const worker = Reflect.construct(target, newArgs, newTarget === wrapped ? target : newTarget);
          if (record && record.instrumented === false) {
            let n = 0;
            worker?.addEventListener?.("error", (e) => {
              if (n++ < 20) {
                post({
                  kind: "app_error",
                  error_kind: `${workerKind} error`,
                  source: record.url.slice(0, 500),
                  stack: "",
                  message: `${record.worker_kind} not instrumented (${record.reason}): ${e?.message || "error event"}`.slice(0, 2e3),
                  step: null
                });
              }
            });
          }
          return worker;
        }
      });
      Object.defineProperty(scope, name, { value: wrapped, writable: true, configurable: true, enumerable: false });
    }
    let container = null;
    try {
      container = scope.navigator?.serviceWorker;
    } catch {
      container = null;
    }
    const proto = container && Object.getPrototypeOf(container);
    if (proto && typeof proto.register === "function") {
      const register = proto.register;
      Object.defineProperty(proto, "register", {
        configurable: true,
        writable: true,
        value: function(url, options) {
          const type = options?.type === "module" ? "module" : "classic";
          const { record } = prepare("serviceworker", url, type);
          if (record) post(record);
          return register.apply(this, arguments);
        }
      });
    }
  }

  // web/inject/frames.js
  var FRAME_TAGS = /* @__PURE__ */ new Set(["IFRAME", "FRAME"]);
  function randomId2() {
    return Math.random().toString(16).slice(2, 10);
  }
  function wrapFrames(scope, { key, enter, post }) {
    if (!scope.document || typeof scope.HTMLIFrameElement !== "function") return false;
    const handled = /* @__PURE__ */ new WeakSet();
    const watched = /* @__PURE__ */ new WeakSet();
    const getters = /* @__PURE__ */ new Map();
    for (const name of ["HTMLIFrameElement", "HTMLFrameElement"]) {
      const proto = scope[name]?.prototype;
      const d = proto && Object.getOwnPropertyDescriptor(proto, "contentWindow");
      if (d?.get) getters.set(proto, d.get);
    }
    const nativeWindow = (el) => {
      for (const [proto, get] of getters) if (proto.isPrototypeOf(el)) return get.call(el);
      return null;
    };
    const report = (el, fields) => {
      let url = "";
      try {
        url = String(el.src || (el.hasAttribute?.("srcdoc") ? "about:srcdoc" : "about:blank"));
      } catch {
        url = "";
      }
      post({ kind: "frame", frame_id: randomId2(), url, instrumented: null, late: false, reason: "", ...fields });
    };
    const visit = (el, win, late) => {
      if (!win || handled.has(win)) return true;
      let has;
      try {
        has = Boolean(win[key]);
      } catch {
        handled.add(win);
        report(el, { instrumented: null, reason: "a cross-origin or sandboxed frame: not reachable from its parent; measured only if its own document got the bootstrap" });
        return false;
      }
      handled.add(win);
      if (has) return true;
      try {
        if (win.document?.scripts?.length) late = true;
      } catch {
      }
      try {
        enter(win, randomId2());
      } catch (err) {
        report(el, { instrumented: false, reason: `the bootstrap could not be run in the frame: ${err?.message ?? err}` });
        return false;
      }
      if (late) {
        report(el, {
          instrumented: "late",
          late: true,
          reason: "the frame ran before the bootstrap reached it (entered at its load): its WebGPU calls before then are not counted"
        });
      }
      return true;
    };
    const watch = (el) => {
      if (watched.has(el)) return;
      watched.add(el);
      el.addEventListener("load", () => {
        let win = null;
        try {
          win = nativeWindow(el);
        } catch {
          win = null;
        }
        visit(el, win, true);
      });
    };
    const look = (el) => {
      if (!el || !FRAME_TAGS.has(el.tagName)) return;
      watch(el);
      let win = null;
      try {
        win = nativeWindow(el);
      } catch {
        win = null;
      }
      visit(el, win, false);
    };
    const lookIn = (node) => {
      if (!node || node.nodeType !== 1 && node.nodeType !== 11) return;
      if (node.nodeType === 1) look(node);
      if (typeof node.querySelectorAll === "function") {
        for (const el of node.querySelectorAll("iframe,frame")) look(el);
      }
    };
    for (const [proto, get] of getters) {
      Object.defineProperty(proto, "contentWindow", {
        configurable: true,
        enumerable: true,
        get() {
          const w = get.call(this);
          if (w) {
            watch(this);
            visit(this, w, false);
          }
          return w;
        }
      });
      const doc = Object.getOwnPropertyDescriptor(proto, "contentDocument");
      if (doc?.get) {
        Object.defineProperty(proto, "contentDocument", {
          configurable: true,
          enumerable: true,
          get() {
            const w = get.call(this);
            if (w) {
              watch(this);
              visit(this, w, false);
            }
            return doc.get.call(this);
          }
        });
      }
    }
    const after = (proto, method, collect) => {
      const original = proto?.[method];
      if (typeof original !== "function") return;
      Object.defineProperty(proto, method, {
        configurable: true,
        writable: true,
        enumerable: false,
        value: function(...args) {
          const nodes = collect(this, args).flatMap((n) => n?.nodeType === 11 && typeof n.querySelectorAll === "function" ? [...n.querySelectorAll("iframe,frame")] : [n]);
          const result = original.apply(this, args);
          for (const n of nodes) lookIn(n);
          return result;
        }
      });
    };
    const nodesIn = (_self, args) => args.filter((a) => a && typeof a === "object");
    const Node = scope.Node?.prototype;
    const Element = scope.Element?.prototype;
    after(Node, "appendChild", (_s, a) => [a[0]]);
    after(Node, "insertBefore", (_s, a) => [a[0]]);
    after(Node, "replaceChild", (_s, a) => [a[0]]);
    for (const m of ["append", "prepend", "before", "after", "replaceWith"]) after(Element, m, nodesIn);
    after(scope.DocumentFragment?.prototype, "append", nodesIn);
    after(Element, "insertAdjacentElement", (_s, a) => [a[1]]);
    after(Element, "insertAdjacentHTML", (self) => [self.parentNode ?? self]);
    for (const [prop, target] of [["innerHTML", (el) => el], ["outerHTML", (el) => el.parentNode]]) {
      const d = Element && Object.getOwnPropertyDescriptor(Element, prop);
      if (!d?.set) continue;
      Object.defineProperty(Element, prop, {
        ...d,
        set(v) {
          const parent = target(this);
          d.set.call(this, v);
          lookIn(parent);
        }
      });
    }
    const origin = scope.origin && scope.origin !== "null" ? scope.origin : scope.location.href;
    const tag = () => `<script src="${new URL(BOOTSTRAP_PATH + bootstrapQuery({ kind: "frame", fid: randomId2() }), origin).href}"><\/script>`;
    const strip = (text) => {
      if (typeof text !== "string" || !text.startsWith('<script src="')) return text;
      const end = text.indexOf("<\/script>");
      return end < 0 || !text.slice(0, end).includes(BOOTSTRAP_PATH) ? text : text.slice(end + "<\/script>".length);
    };
    const iframeProto = scope.HTMLIFrameElement.prototype;
    const srcdoc = Object.getOwnPropertyDescriptor(iframeProto, "srcdoc");
    if (srcdoc?.set) {
      Object.defineProperty(iframeProto, "srcdoc", {
        ...srcdoc,
        get() {
          return strip(srcdoc.get.call(this));
        },
        set(v) {
          watch(this);
          srcdoc.set.call(this, tag() + String(v));
        }
      });
    }
    const setAttribute = Element?.setAttribute;
    if (typeof setAttribute === "function") {
      Object.defineProperty(Element, "setAttribute", {
        configurable: true,
        writable: true,
        enumerable: false,
        value: function(name, value) {
          if (this.tagName === "IFRAME" && String(name).toLowerCase() === "srcdoc") {
            watch(this);
            return setAttribute.call(this, name, tag() + String(value));
          }
          return setAttribute.call(this, name, value);
        }
      });
    }
    const getAttribute = Element?.getAttribute;
    if (typeof getAttribute === "function") {
      Object.defineProperty(Element, "getAttribute", {
        configurable: true,
        writable: true,
        enumerable: false,
        value: function(name) {
          const v = getAttribute.call(this, name);
          return this.tagName === "IFRAME" && String(name).toLowerCase() === "srcdoc" ? strip(v) : v;
        }
      });
    }
    const Observer = scope.MutationObserver;
    if (typeof Observer === "function") {
      const start = () => {
        const mo = new Observer((records) => {
          for (const r of records) for (const n of r.addedNodes) lookIn(n);
        });
        mo.observe(scope.document, { childList: true, subtree: true });
      };
      start();
    }
    for (const el of scope.document.querySelectorAll?.("iframe,frame") ?? []) look(el);
    return true;
  }

  // web/probes/device-events.js
  var MAX_ERROR_SAMPLES = 100;
  function installDeviceEvents(scope, { post, step }) {
    const destroyedAt = /* @__PURE__ */ new WeakMap();
    const reported = /* @__PURE__ */ new WeakSet();
    const deviceOfQueue = /* @__PURE__ */ new WeakMap();
    let errors = 0;
    let anyDestroyed = false;
    const cut = (text) => String(text ?? "").slice(0, 2e3);
    const watch = (device) => {
      if (!device || typeof device !== "object") return;
      try {
        deviceOfQueue.set(device.queue, device);
      } catch {
      }
      Promise.resolve(device.lost).then((info) => {
        if (!info || info.reason === "destroyed" || reported.has(device)) return;
        reported.add(device);
        post({ kind: "device_lost", reason: String(info.reason ?? "unknown"), message: cut(info.message), step: step() });
      }, () => {
      });
      device.addEventListener?.("uncapturederror", (e) => {
        errors += 1;
        if (errors > MAX_ERROR_SAMPLES) {
          if (errors === MAX_ERROR_SAMPLES + 1) post({ kind: "log", message: `more than ${MAX_ERROR_SAMPLES} uncaptured WebGPU errors: the rest are not recorded` });
          return;
        }
        const err = e.error;
        post({ kind: "uncaptured_error", message: cut(err?.message ?? err), error_type: err?.constructor?.name ?? "GPUError", step: step() });
      });
    };
    const usedAfterDestroy = (device, what) => {
      if (!device || !destroyedAt.has(device) || reported.has(device)) return;
      reported.add(device);
      const at = destroyedAt.get(device);
      post({
        kind: "device_lost",
        reason: "destroyed",
        step: step(),
        destroy_step: at,
        message: `device.destroy() was called at step ${at}, then the device was used (${what})`
      });
    };
    const wrapAfter = (iface, method, after) => {
      const proto = scope[iface]?.prototype;
      if (!proto || typeof proto[method] !== "function" || proto[method].__harnessDeviceEvents) return;
      const original = proto[method];
      const wrapped = function(...args) {
        const result = original.apply(this, args);
        after(this, result);
        return result;
      };
      wrapped.__harnessDeviceEvents = true;
      Object.defineProperty(proto, method, { value: wrapped, writable: true, configurable: true });
    };
    wrapAfter("GPUAdapter", "requestDevice", (_adapter, promise) => {
      Promise.resolve(promise).then(watch, () => {
      });
    });
    wrapAfter("GPUDevice", "destroy", (device) => {
      if (!destroyedAt.has(device)) destroyedAt.set(device, step());
      anyDestroyed = true;
    });
    for (const method of ["createBuffer", "createBindGroup", "createCommandEncoder", "createShaderModule", "createComputePipeline"]) {
      wrapAfter("GPUDevice", method, (device) => {
        if (anyDestroyed) usedAfterDestroy(device, `GPUDevice.${method}`);
      });
    }
    for (const method of ["submit", "writeBuffer", "onSubmittedWorkDone"]) {
      wrapAfter("GPUQueue", method, (queue) => {
        if (anyDestroyed) usedAfterDestroy(deviceOfQueue.get(queue), `GPUQueue.${method}`);
      });
    }
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    return { settle: async () => {
      await task();
      await task();
    } };
  }

  // web/inject/bootstrap.js
  var GLOBAL_KEY = "__webgpuHarness";
  var OPEN_STEP_MS = 100;
  var SNAPSHOT_MIN_MS = 4;
  var MAX_APP_ERRORS = 20;
  var CONTROL_CHANNEL = "__webgpu_harness_control__";
  function realmKind(scope) {
    if (typeof scope.ServiceWorkerGlobalScope === "function" && scope instanceof scope.ServiceWorkerGlobalScope) return "serviceworker";
    if (typeof scope.SharedWorkerGlobalScope === "function" && scope instanceof scope.SharedWorkerGlobalScope) return "sharedworker";
    if (typeof scope.DedicatedWorkerGlobalScope === "function" && scope instanceof scope.DedicatedWorkerGlobalScope) return "worker";
    try {
      if (scope.top !== scope) return "frame";
    } catch {
    }
    return "page";
  }
  function errorText(value) {
    if (value instanceof Error || value && typeof value === "object" && "message" in value) {
      return `${value.name ?? "Error"}: ${value.message}`;
    }
    try {
      return String(value);
    } catch {
      return "(unprintable)";
    }
  }
  function adapterSample(adapter, device) {
    const info = adapter?.info ?? {};
    return {
      kind: "device",
      adapter: {
        vendor: info.vendor ?? "",
        architecture: info.architecture ?? "",
        device: info.device ?? "",
        description: info.description ?? "",
        is_fallback_adapter: Boolean(info.isFallbackAdapter ?? adapter?.isFallbackAdapter)
      },
      features: [...device?.features ?? []].sort()
    };
  }
  function install(config = {}, target = void 0, reenter = null) {
    const scope = target ?? globalThis;
    if (scope[GLOBAL_KEY]) return scope[GLOBAL_KEY];
    if (realmKind(scope) === "page" && String(scope.location?.href ?? "") === "about:blank") return null;
    const api = {};
    Object.defineProperty(scope, GLOBAL_KEY, { value: api, configurable: false, enumerable: false, writable: false });
    const o = {
      fetch: scope.fetch,
      setTimeout: scope.setTimeout,
      clearTimeout: scope.clearTimeout,
      setInterval: scope.setInterval,
      BroadcastChannel: scope.BroadcastChannel,
      XMLHttpRequest: scope.XMLHttpRequest,
      Blob: scope.Blob,
      URL: scope.URL,
      createObjectURL: scope.URL?.createObjectURL,
      revokeObjectURL: scope.URL?.revokeObjectURL,
      // the run's token: every batch and worker registration carries it, the harness refuses
      // what does not (a page or process elsewhere on the machine cannot forge samples)
      token: String(config.token ?? "")
    };
    const hints = config.realm ?? {};
    const realm = {
      id: Math.random().toString(16).slice(2, 10),
      kind: realmKind(scope),
      url: String(scope.location?.href ?? ""),
      script_type: hints.type ?? null,
      worker_id: hints.wid ?? null,
      frame_id: hints.fid ?? null,
      created_url: hints.created_url ?? null
    };
    const transport = new Transport(scope, realm, o);
    const post = (s) => transport.post(s);
    if (realm.kind === "page") transport.listenForRelays();
    let webgpu = scope.navigator?.gpu ? "real" : "none";
    let emulation = null;
    const wanted = config.webgpu ?? "auto";
    if (wanted === "emulated" || wanted === "auto" && !scope.navigator?.gpu) {
      try {
        emulation = installEmulatedWebGPU(scope, config.emulationOptions ?? {});
        webgpu = "emulated";
      } catch (err) {
        post({ kind: "log", message: `emulated WebGPU not installed: ${err?.message ?? err}` });
      }
    }
    const devices = [];
    const adapterProto = scope.GPUAdapter?.prototype;
    if (adapterProto && typeof adapterProto.requestDevice === "function") {
      const requestDevice = adapterProto.requestDevice;
      Object.defineProperty(adapterProto, "requestDevice", {
        configurable: true,
        writable: true,
        value: function(...args) {
          const adapter = this;
          const p = requestDevice.apply(this, args);
          p.then((device) => {
            devices.push(device);
            post({ ...adapterSample(adapter, device), index: devices.length - 1 });
          }, () => {
          });
          return p;
        }
      });
    }
    const counting = config.probes !== false;
    const installed = counting ? installCounters(scope) : [];
    const finalizationRegistry = counting ? installLiveObjects() : false;
    const stepOn = parseStepOn(config.stepOn ?? "mapAsync");
    const stats = emulation ? () => {
      const out = {
        modeled_native_bytes: 0,
        native_bind_groups_live: 0,
        native_bind_groups_released: 0,
        out_of_memory_errors: 0,
        command_buffers_rejected: 0,
        dispatches_dropped: 0
      };
      for (const d of devices) {
        const s = emulationStats(d);
        out.out_of_memory_errors += s.outOfMemoryErrors ?? 0;
        out.command_buffers_rejected += s.commandBuffersRejected ?? 0;
        out.dispatches_dropped += s.dispatchesDropped ?? 0;
        out.modeled_native_bytes += s.modeledNativeBytes;
        out.native_bind_groups_live += s.bindGroupsLive;
        out.native_bind_groups_released += s.bindGroupsCollected;
      }
      return out;
    } : null;
    const recorder = new StepRecorder(post, stepOn, stats, () => scope.performance.now());
    const trigger = installStepTrigger(scope, recorder, o, () => devices.length > 0);
    try {
      installDeviceEvents(scope, { post, step: () => recorder.step });
    } catch (err) {
      post({ kind: "log", message: `device events not installed: ${err?.message ?? err}` });
    }
    const attempt = (what, fn) => {
      try {
        return fn();
      } catch (err) {
        post({ kind: "log", message: `${what} not installed: ${err?.message ?? err}` });
        return false;
      }
    };
    if (config.wrapWorkers !== false) attempt("worker wrappers", () => wrapWorkers(scope, post, o));
    const framesWrapped = typeof reenter === "function" && realm.kind !== "worker" && realm.kind !== "sharedworker" && realm.kind !== "serviceworker" && attempt("frame wrappers", () => wrapFrames(scope, {
      key: GLOBAL_KEY,
      post,
      enter: (win, fid) => reenter({ ...config, realm: { kind: "frame", fid } }, win)
    }));
    let errors = 0;
    const onError = (errorKind, message, where, stack) => {
      errors += 1;
      if (errors > MAX_APP_ERRORS) {
        if (errors === MAX_APP_ERRORS + 1) post({ kind: "log", message: `more than ${MAX_APP_ERRORS} app errors in this realm: the rest are not recorded` });
        return;
      }
      post({
        kind: "app_error",
        error_kind: errorKind,
        message: String(message).slice(0, 2e3),
        source: where.slice(0, 500),
        stack: String(stack ?? "").slice(0, 4e3),
        step: recorder.step
      });
    };
    scope.addEventListener?.("error", (e) => {
      if (e?.target && e.target !== scope) return;
      const where = e.filename ? `${e.filename}:${e.lineno ?? 0}:${e.colno ?? 0}` : "";
      onError("error", e.error !== void 0 && e.error !== null ? errorText(e.error) : e.message ?? "error", where, e.error?.stack);
    });
    scope.addEventListener?.("unhandledrejection", (e) => onError("unhandledrejection", errorText(e.reason), "", e.reason?.stack));
    if (realm.kind === "page") scope.addEventListener?.("pagehide", () => transport.flush());
    const now = () => scope.performance.now();
    let taskTimer = null;
    let lastSnapshot = -Infinity;
    const snapshot2 = (why) => {
      if (!devices.length) return;
      if (recorder.openSnapshot(why)) lastSnapshot = now();
    };
    if (counting) {
      onAnyCall(() => {
        if (taskTimer !== null || !devices.length || now() - recorder.t0 < OPEN_STEP_MS) return;
        const wait = Math.max(0, lastSnapshot + SNAPSHOT_MIN_MS - now());
        taskTimer = o.setTimeout.call(scope, () => {
          taskTimer = null;
          snapshot2("task");
        }, wait);
      });
    }
    o.setInterval.call(scope, () => snapshot2("interval"), OPEN_STEP_MS);
    let control = null;
    if (typeof o.BroadcastChannel === "function") {
      try {
        control = new o.BroadcastChannel(CONTROL_CHANNEL);
        control.onmessage = (e) => {
          if (e.data?.webgpuHarnessFlush) {
            snapshot2("flush");
            transport.flush();
          }
        };
      } catch {
        control = null;
      }
    }
    post({
      kind: "env",
      user_agent: String(scope.navigator?.userAgent ?? ""),
      webgpu,
      cross_origin_isolated: Boolean(scope.crossOriginIsolated),
      shared_array_buffer: typeof SharedArrayBuffer === "function",
      probes_installed: installed,
      finalization_registry: finalizationRegistry,
      step_on: stepOn.spec,
      step_trigger: trigger,
      realm_kind: realm.kind,
      realm_url: realm.url,
      script_type: realm.script_type,
      worker_id: realm.worker_id,
      frame_id: realm.frame_id,
      created_url: realm.created_url,
      // performance.timeOrigin (ms since the Unix epoch): with each sample's t_ms it places this
      // realm's steps on the harness's clock (harness/store/timeline.py)
      time_origin_ms: scope.performance?.timeOrigin ?? null,
      frames_wrapped: Boolean(framesWrapped)
    });
    transport.flush();
    Object.assign(api, {
      realm,
      /** Post this realm's open step (if it counted calls), ask every other realm of the app for
       * theirs (CONTROL_CHANNEL), and send what is queued. */
      flush: () => {
        snapshot2("flush");
        try {
          control?.postMessage({ webgpuHarnessFlush: true });
        } catch {
        }
        return transport.flush();
      },
      status: () => ({
        realm,
        steps: recorder.step,
        devices: devices.length,
        webgpu,
        sent: transport.sent,
        relayed: transport.relayed,
        failed: transport.failed,
        queued: transport.queue.length
      }),
      /** End the open step now (the harness's last step when a run ends between boundaries). */
      endStep: () => recorder.boundary("harness")
    });
    return api;
  }
  return __toCommonJS(bootstrap_exports);
})();
