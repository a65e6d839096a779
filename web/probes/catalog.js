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
  {"name": "createBufferBytes", "column": "create_buffer_bytes", "unit": "bytes", "metric": "create_buffer_bytes_per_token", "what": "bytes asked of GPUDevice.createBuffer (descriptor.size; creations that then fail validation included)"}
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
