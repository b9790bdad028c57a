// What the ONNX Runtime runners (ort_run.mjs, ort_eval.mjs) share: loading the pinned
// onnxruntime-node, the session options octet compares against, argument checks, output file
// names and the one-line error exit.
//
// Environment: OCTET_ORT_NODE_DIR points at a folder holding node_modules/onnxruntime-node
// (default: third_party/onnxruntime-node). ORT_DISABLE_TELEMETRY defaults to 1.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from './npy.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_ORT_DIR = path.resolve(HERE, '../../third_party/onnxruntime-node');
export const GRAPH_OPT = ['disabled', 'basic', 'extended', 'all'];

// A mistake in the command line: the error line ends with "(see --help)".
export class UsageError extends Error {}

export function loadOrt() {
  const dir = process.env.OCTET_ORT_NODE_DIR ? path.resolve(process.env.OCTET_ORT_NODE_DIR) : DEFAULT_ORT_DIR;
  const pkg = path.join(dir, 'node_modules', 'onnxruntime-node', 'package.json');
  if (!fs.existsSync(pkg)) {
    const how = process.env.OCTET_ORT_NODE_DIR
      ? `OCTET_ORT_NODE_DIR=${dir} has no node_modules/onnxruntime-node`
      : `install it with: (cd ${DEFAULT_ORT_DIR} && npm ci --ignore-scripts)`;
    throw new Error(`onnxruntime-node is not installed in ${dir}; ${how}`);
  }
  // ORT 1.30's Linux library has telemetry on by default: it tries HTTPS uploads and leaves
  // .ses and mat-debug-<pid>.log files in $TMPDIR. An oracle has no business doing either.
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
  // Resolve from that folder only, never from wherever the caller happens to be.
  const require = createRequire(path.join(dir, 'package.json'));
  try {
    return { ort: require('onnxruntime-node'), version: JSON.parse(fs.readFileSync(pkg, 'utf8')).version };
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node from ${dir}: ${e.message}`);
  }
}

// An integer option: `text` must be a decimal integer >= min.
export function intOption(flag, text, min = 1) {
  if (!/^(0|[1-9][0-9]*)$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    const what = min === 1 ? 'a positive integer' : min === 0 ? 'a non-negative integer' : `an integer >= ${min}`;
    throw new UsageError(`${flag} must be ${what}, got '${text}'`);
  }
  return Number(text);
}

export function graphOptOption(text) {
  if (!GRAPH_OPT.includes(text)) throw new UsageError(`--graph-opt must be one of ${GRAPH_OPT.join('|')}, got '${text}'`);
  return text;
}

export function u8s8Option(text) {
  if (text !== 'exact' && text !== 'native') throw new UsageError(`--u8s8 must be exact or native, got '${text}'`);
  return text;
}

// NAME=FILE.npy -> [name, file]
export function inputSpec(spec) {
  const eq = spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--input wants NAME=FILE.npy, got '${spec}'`);
  return [spec.slice(0, eq), spec.slice(eq + 1)];
}

// Wraps a failure of ONNX Runtime itself so the message names the model and the step.
export const ortError = (model, what) => (e) => {
  throw new Error(`${model}: onnxruntime ${what} failed: ${e.message}`);
};

// The session every octet comparison uses: CPU, `threads` intra-op threads, one inter-op
// thread, sequential execution, graph optimization `graphOpt`.
// u8s8 'exact' (the default) sets session.x64quantprecision on x86 CPUs without VNNI: there
// MLAS's uint8 x int8 kernels sum pairs of products with VPMADDUBSW, which saturates at int16
// (255 * 127 * 2 > 32767), and this option makes ORT flip constant int8 weights to uint8 and
// run its exact kernels instead. With VNNI (AVX512-VNNI or AVX-VNNI) MLAS's uint8 x int8
// kernels use VPDPBUSD, which sums into int32 and is exact already; the option would only move
// ORT to its uint8 x uint8 int16 kernels (ResNet-50 INT8 on Zen 5: 40.6-42.8 vs 17.2-17.7 ms),
// so it is not set.
// 'native' runs ORT as an application gets it by default, saturation included.
// ORT 1.30 flips the weights of int8-activation convs too, and then finds no kernel for int8 x
// uint8: such a model loads without the option (MLAS's int8 x int8 path does not use
// VPMADDUBSW, so it does not saturate either).
// True on an x86-64 Linux CPU whose flags list AVX512-VNNI or AVX-VNNI. Elsewhere (or when
// /proc/cpuinfo cannot be read) false, which keeps the exact option on.
let vnniCache;
export function x86HasVnni() {
  if (vnniCache === undefined) {
    vnniCache = false;
    if (process.arch === 'x64' && process.platform === 'linux') {
      try {
        const flags = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m);
        vnniCache = !!flags && /\b(avx512_vnni|avx_vnni)\b/.test(flags[1]);
      } catch {
        vnniCache = false;
      }
    }
  }
  return vnniCache;
}

// `extra` adds session options (e.g. enableProfiling) to these.
export async function createSession(ort, model, { threads, graphOpt, u8s8 = 'exact', extra = {} }) {
  if (!fs.existsSync(model)) throw new Error(`${model}: no such model file`);
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: graphOpt,
    ...extra,
  };
  if (u8s8 === 'exact' && !x86HasVnni()) {
    try {
      return await ort.InferenceSession.create(model, { ...options, extra: { session: { x64quantprecision: '1' } } });
    } catch (e) {
      if (!String(e && e.message).includes('Failed to find kernel')) return ortError(model, 'load')(e);
    }
  }
  return ort.InferenceSession.create(model, options).catch(ortError(model, 'load'));
}

// Checks that `names` (the inputs the caller has data for) are exactly the session's inputs.
export function checkInputNames(session, model, names) {
  for (const name of names) {
    if (!session.inputNames.includes(name)) {
      throw new Error(`${model} has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
    }
  }
  const missing = session.inputNames.filter((n) => !names.includes(n));
  if (missing.length) throw new Error(`${model}: no --input given for ${missing.join(', ')}`);
}

// Output names are arbitrary strings; file names keep [A-Za-z0-9._-] and stay unique
// (case-insensitively, and never one of `reserved`).
export function fileNames(names, reserved = ['outputs.json', 'timings.json']) {
  const used = new Set(reserved.map((s) => s.toLowerCase()));
  const out = new Map();
  for (const name of names) {
    const base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || '_';
    let file = `${base}.npy`;
    for (let k = 1; used.has(file.toLowerCase()); k++) file = `${base}_${k}.npy`;
    used.add(file.toLowerCase());
    out.set(name, file);
  }
  return out;
}

// A JSON object with one entry per line, written atomically.
export function writeJsonAtomic(file, object) {
  const body = Object.entries(object).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n');
  writeFileAtomic(file, `{\n${body}\n}\n`);
}

// The comment block at the top of a script (after the #! line), as help text.
export function printHelp(scriptUrl) {
  const lines = fs.readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n').slice(1);
  const end = lines.findIndex((l) => !l.startsWith('//'));
  process.stdout.write(lines.slice(0, end < 0 ? lines.length : end).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
}

// An error's message on one line.
export function errorLine(e) {
  return String(e && e.message ? e.message : e).replace(/\s*\n\s*/g, ' ').trim();
}

// Runs `main`; any error becomes one line "<prog>: <message>" on stderr and exit status 1.
export function runMain(prog, main) {
  main().catch((e) => {
    const msg = errorLine(e);
    const usage = e instanceof UsageError || e?.code?.startsWith?.('ERR_PARSE_ARGS');
    process.stderr.write(`${prog}: ${msg}${usage ? ' (see --help)' : ''}\n`);
    process.exit(1);
  });
}
