// WGSL reflection used for 'auto' layouts (web/emulation/wgsl-reflect.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reflectWgsl, bindingsForEntryPoint } from '../../web/emulation/wgsl-reflect.js';

const CODE = `
enable f16;
// @group(0) @binding(9) var<storage> commented: array<f32>;
struct Uniforms { n: u32, scale: f32, @align(16) v: vec3<f32>, m: mat4x4f };
struct Out { count: atomic<u32>, data: array<vec4<f32>> }
alias Vec = vec4<f32>;
@group(0) @binding(0) var<storage, read> a: array<Vec>;
@group(0) @binding(1) var<storage, read_write> y: Out;
@group(0) @binding(2) var<uniform> uniforms: Uniforms;
@group(0) @binding(3) var<storage, read> unused: array<f32, 8>;
@group(1) @binding(0) var<storage> z: array<f16>;
fn helper(i: u32) -> f32 { return f32(z[i]); }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  /* block /* nested */ */
  if (gid.x < uniforms.n) { y.data[gid.x] = a[gid.x] * helper(gid.x); }
}
@compute @workgroup_size(1) fn other() { let q = a[0]; }
`;

test('bindings, types and minimum binding sizes', () => {
  const r = reflectWgsl(CODE);
  assert.equal(r.ok, true);
  assert.deepEqual(r.entryPoints.map((e) => e.name), ['main', 'other']);
  const byName = Object.fromEntries(r.resources.map((x) => [x.name, x]));
  assert.equal(byName.a.type, 'read-only-storage');
  assert.equal(byName.a.minBindingSize, 16);
  assert.equal(byName.y.type, 'storage');
  assert.equal(byName.y.minBindingSize, 32);
  assert.equal(byName.uniforms.type, 'uniform');
  assert.equal(byName.uniforms.minBindingSize, 96);
  assert.equal(byName.unused.minBindingSize, 32);
  assert.equal(byName.z.type, 'read-only-storage');
  assert.equal(byName.z.group, 1);
  assert.equal(r.resources.some((x) => x.name === 'commented'), false);
});

test('static use follows called functions', () => {
  const r = reflectWgsl(CODE);
  assert.deepEqual(bindingsForEntryPoint(r, 'main').map((x) => x.name), ['a', 'y', 'uniforms', 'z']);
  assert.deepEqual(bindingsForEntryPoint(r, 'other').map((x) => x.name), ['a']);
});

test('malformed source is reported', () => {
  assert.equal(reflectWgsl('fn x() {').ok, false);
  assert.equal(reflectWgsl(42).ok, false);
});
