// The probe catalog: the one list of what the in-worker probes count and track.
//
// The harness reads the JSON arrays between the `catalog:` markers (harness/store/catalog.py)
// and derives from them the sample schema it accepts (harness/serve/samples.py), the steps.csv
// columns (harness/tables.py, RESULTS.md) and the per-token metrics (harness/stats/metrics.py);
// tests/test_catalog.py evaluates this module in node and compares. Keep the arrays strict JSON
// and append new entries at the end (steps.csv column order is a stable interface).
//
// COUNTERS: per-step deltas of web/probes/counters.js. `name`: counter (the WebGPU method or
//   what it sums), `column`: steps.csv column, `unit`, `metric`: the per-token metric the
//   statistics report (null: column only), `what`: what is counted (WebGPU spec names).
// LIVE: cumulative wrapper counts of web/probes/live-objects.js (FinalizationRegistry), each
//   a steps.csv column of the same name; `optional`: a sender may leave it out (not measured),
//   `signed`: it may be negative.

export const COUNTERS = /* catalog:counters */ [
  {"name": "createBindGroup", "column": "create_bind_group", "unit": "calls", "metric": "bind_groups_per_token", "what": "GPUDevice.createBindGroup calls"},
  {"name": "createBuffer", "column": "create_buffer", "unit": "calls", "metric": "buffers_created_per_token", "what": "GPUDevice.createBuffer calls"},
  {"name": "createComputePipeline", "column": "create_compute_pipeline", "unit": "calls", "metric": null, "what": "GPUDevice.createComputePipeline calls"},
  {"name": "createComputePipelineAsync", "column": "create_compute_pipeline_async", "unit": "calls", "metric": null, "what": "GPUDevice.createComputePipelineAsync calls"},
  {"name": "createShaderModule", "column": "create_shader_module", "unit": "calls", "metric": null, "what": "GPUDevice.createShaderModule calls"},
  {"name": "createCommandEncoder", "column": "create_command_encoder", "unit": "calls", "metric": null, "what": "GPUDevice.createCommandEncoder calls"},
  {"name": "submit", "column": "submit", "unit": "calls", "metric": "submits_per_token", "what": "GPUQueue.submit calls"},
  {"name": "commandBuffersSubmitted", "column": "command_buffers_submitted", "unit": "command buffers", "metric": null, "what": "command buffers passed to GPUQueue.submit"},
  {"name": "writeBuffer", "column": "write_buffer", "unit": "calls", "metric": "write_buffers_per_token", "what": "GPUQueue.writeBuffer calls"},
  {"name": "writeBufferBytes", "column": "write_buffer_bytes", "unit": "bytes", "metric": "write_buffer_bytes_per_token", "what": "bytes written by GPUQueue.writeBuffer"},
  {"name": "dispatchWorkgroups", "column": "dispatch_workgroups", "unit": "calls", "metric": "dispatches_per_token", "what": "GPUComputePassEncoder.dispatchWorkgroups calls"},
  {"name": "dispatchWorkgroupsIndirect", "column": "dispatch_workgroups_indirect", "unit": "calls", "metric": null, "what": "GPUComputePassEncoder.dispatchWorkgroupsIndirect calls"},
  {"name": "mapAsync", "column": "map_async", "unit": "calls", "metric": null, "what": "GPUBuffer.mapAsync calls"},
  {"name": "bufferDestroy", "column": "buffer_destroy", "unit": "calls", "metric": null, "what": "GPUBuffer.destroy calls"},
  {"name": "beginComputePass", "column": "begin_compute_pass", "unit": "calls", "metric": "compute_passes_per_token", "what": "GPUCommandEncoder.beginComputePass calls"},
  {"name": "copyBufferToBuffer", "column": "copy_buffer_to_buffer", "unit": "calls", "metric": null, "what": "GPUCommandEncoder.copyBufferToBuffer calls"},
  {"name": "onSubmittedWorkDone", "column": "on_submitted_work_done", "unit": "calls", "metric": null, "what": "GPUQueue.onSubmittedWorkDone calls"},
  {"name": "createBufferBytes", "column": "create_buffer_bytes", "unit": "bytes", "metric": "create_buffer_bytes_per_token", "what": "bytes asked of GPUDevice.createBuffer (descriptor.size; creations that then fail validation included)"},
  {"name": "setBindGroup", "column": "set_bind_group", "unit": "calls", "metric": null, "what": "setBindGroup calls on compute passes, render passes and render bundle encoders"},
  {"name": "setBindGroupDynamicOffsets", "column": "set_bind_group_dynamic_offsets", "unit": "calls", "metric": null, "what": "setBindGroup calls that pass at least one dynamic offset"},
  {"name": "setImmediates", "column": "set_immediates", "unit": "calls", "metric": null, "what": "setImmediates calls on compute passes, render passes and render bundle encoders"},
  {"name": "setImmediatesBytes", "column": "set_immediates_bytes", "unit": "bytes", "metric": null, "what": "bytes passed to setImmediates"},
  {"name": "createBufferBytesMapRead", "column": "create_buffer_bytes_map_read", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has MAP_READ (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesMapWrite", "column": "create_buffer_bytes_map_write", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has MAP_WRITE (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesCopySrc", "column": "create_buffer_bytes_copy_src", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has COPY_SRC (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesCopyDst", "column": "create_buffer_bytes_copy_dst", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has COPY_DST (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesIndex", "column": "create_buffer_bytes_index", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has INDEX (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesVertex", "column": "create_buffer_bytes_vertex", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has VERTEX (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesUniform", "column": "create_buffer_bytes_uniform", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has UNIFORM (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesStorage", "column": "create_buffer_bytes_storage", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has STORAGE (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesIndirect", "column": "create_buffer_bytes_indirect", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has INDIRECT (a buffer counts under each of its usage flags)"},
  {"name": "createBufferBytesQueryResolve", "column": "create_buffer_bytes_query_resolve", "unit": "bytes", "metric": null, "what": "bytes asked of GPUDevice.createBuffer for buffers whose usage has QUERY_RESOLVE (a buffer counts under each of its usage flags)"},
  {"name": "beginRenderPass", "column": "begin_render_pass", "unit": "calls", "metric": null, "what": "GPUCommandEncoder.beginRenderPass calls"},
  {"name": "draw", "column": "draw", "unit": "calls", "metric": null, "what": "draw calls on render passes and render bundle encoders"},
  {"name": "drawIndexed", "column": "draw_indexed", "unit": "calls", "metric": null, "what": "drawIndexed calls on render passes and render bundle encoders"},
  {"name": "drawIndirect", "column": "draw_indirect", "unit": "calls", "metric": null, "what": "drawIndirect calls on render passes and render bundle encoders"},
  {"name": "drawIndexedIndirect", "column": "draw_indexed_indirect", "unit": "calls", "metric": null, "what": "drawIndexedIndirect calls on render passes and render bundle encoders"},
  {"name": "createRenderPipeline", "column": "create_render_pipeline", "unit": "calls", "metric": null, "what": "GPUDevice.createRenderPipeline calls"},
  {"name": "createRenderPipelineAsync", "column": "create_render_pipeline_async", "unit": "calls", "metric": null, "what": "GPUDevice.createRenderPipelineAsync calls"},
  {"name": "uncapturedErrors", "column": "uncaptured_errors", "unit": "errors", "metric": null, "what": "uncapturederror events of the realm's GPUDevices (errors no error scope caught), counted when delivered"},
  {"name": "uncapturedOutOfMemoryErrors", "column": "uncaptured_out_of_memory_errors", "unit": "errors", "metric": null, "what": "of those, GPUOutOfMemoryError"},
  {"name": "uncapturedValidationErrors", "column": "uncaptured_validation_errors", "unit": "errors", "metric": null, "what": "of those, GPUValidationError"}
] /* end:counters */;

export const LIVE = /* catalog:live */ [
  {"name": "bind_groups_created", "unit": "bind groups", "what": "GPUBindGroup wrappers created so far"},
  {"name": "bind_groups_collected", "unit": "bind groups", "what": "GPUBindGroup wrappers the GC collected so far"},
  {"name": "bind_groups_live", "unit": "bind groups", "what": "created − collected"},
  {"name": "buffers_created", "unit": "buffers", "what": "GPUBuffer wrappers created so far"},
  {"name": "buffers_collected", "unit": "buffers", "what": "GPUBuffer wrappers the GC collected so far"},
  {"name": "buffers_live", "unit": "buffers", "what": "created − collected"},
  {"name": "buffer_bytes_created", "unit": "bytes", "what": "createBuffer sizes so far", "optional": true},
  {"name": "buffer_bytes_destroyed", "unit": "bytes", "what": "bytes of buffers destroyed (destroy(), or their device destroyed or lost)", "optional": true},
  {"name": "buffer_bytes_collected", "unit": "bytes", "what": "bytes of buffers the GC collected before they were destroyed", "optional": true},
  {"name": "buffer_bytes_live", "unit": "bytes", "what": "created − destroyed − collected", "optional": true, "signed": true},
  {"name": "buffers_destroyed", "unit": "buffers", "what": "GPUBuffers destroyed so far (destroy(), or their device destroyed or lost)", "optional": true},
  {"name": "buffers_not_destroyed", "unit": "buffers", "what": "created − destroyed − collected before being destroyed: buffers still holding their memory", "optional": true, "signed": true}
] /* end:live */;

/** Counter names, in the order of the steps.csv columns. */
export const COUNTER_NAMES = COUNTERS.map((c) => c.name);
/** Live-object keys of a step sample's `live`, in column order. */
export const LIVE_KEYS = LIVE.map((l) => l.name);
