#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) on .npy inputs and writes every output as .npy:
// the reference oracle octet's tests and tools compare against.
//
//   node tools/ort/ort_run.mjs --model M.onnx --input NAME=FILE.npy [--input ...] --output-dir DIR
//        [--threads N] [--graph-opt disabled|basic|extended|all] [--outputs name1,name2]
//   node tools/ort/ort_run.mjs --version      # prints the ONNX Runtime version, or why it cannot load
//
// DIR/<sanitized output name>.npy for each output, then DIR/outputs.json
// ({"<output name>": {"file": "x.npy", "shape": [..], "dtype": "float32"}, ...}), written last,
// so its presence means the run finished. Errors print one line on stderr and exit 1.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readNpy, writeNpy, writeFileAtomic } from './npy.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_ORT_DIR = path.resolve(HERE, '../../third_party/onnxruntime-node');
const GRAPH_OPT = ['disabled', 'basic', 'extended', 'all'];

class UsageError extends Error {}

function loadOrt() {
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

function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      input: { type: 'string', multiple: true, default: [] },
      'output-dir': { type: 'string' },
      threads: { type: 'string', default: '1' },
      'graph-opt': { type: 'string', default: 'all' },
      outputs: { type: 'string' },
      version: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help || values.version) return values;
  if (!values.model) throw new UsageError('--model is required');
  if (!values['output-dir']) throw new UsageError('--output-dir is required');
  if (!/^[1-9][0-9]*$/.test(values.threads)) throw new UsageError(`--threads must be a positive integer, got '${values.threads}'`);
  if (!GRAPH_OPT.includes(values['graph-opt'])) {
    throw new UsageError(`--graph-opt must be one of ${GRAPH_OPT.join('|')}, got '${values['graph-opt']}'`);
  }
  values.inputs = new Map();
  for (const spec of values.input) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--input wants NAME=FILE.npy, got '${spec}'`);
    const name = spec.slice(0, eq);
    if (values.inputs.has(name)) throw new UsageError(`--input ${name} given twice`);
    values.inputs.set(name, spec.slice(eq + 1));
  }
  return values;
}

// Output names are arbitrary strings; file names keep [A-Za-z0-9._-] and stay unique.
function fileNames(names) {
  const used = new Set(['outputs.json']);
  const out = new Map();
  for (const name of names) {
    let base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || '_';
    let file = `${base}.npy`;
    for (let k = 1; used.has(file.toLowerCase()); k++) file = `${base}_${k}.npy`;
    used.add(file.toLowerCase());
    out.set(name, file);
  }
  return out;
}

async function main() {
  const args = parseCli(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 12)
      .map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
    return;
  }
  const { ort, version } = loadOrt();
  if (args.version) {
    process.stdout.write(`onnxruntime-node ${version}\n`);
    return;
  }
  if (!fs.existsSync(args.model)) throw new Error(`${args.model}: no such model file`);
  // A stale index from an earlier run must not make a failed run look finished.
  fs.rmSync(path.join(args['output-dir'], 'outputs.json'), { force: true });

  const ortError = (what) => (e) => { throw new Error(`${args.model}: onnxruntime ${what} failed: ${e.message}`); };
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(args.threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: args['graph-opt'],
  }).catch(ortError('load'));

  for (const name of args.inputs.keys()) {
    if (!session.inputNames.includes(name)) {
      throw new Error(`${args.model} has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
    }
  }
  const missing = session.inputNames.filter((n) => !args.inputs.has(n));
  if (missing.length) throw new Error(`${args.model}: no --input given for ${missing.join(', ')}`);

  const feeds = {};
  for (const [name, file] of args.inputs) {
    const a = readNpy(file);
    feeds[name] = new ort.Tensor(a.dtype, a.data, a.shape);
  }

  const wanted = args.outputs === undefined ? session.outputNames : args.outputs.split(',').filter((s) => s.length);
  for (const name of wanted) {
    if (!session.outputNames.includes(name)) {
      throw new Error(`${args.model} has no output '${name}' (outputs: ${session.outputNames.join(', ')})`);
    }
  }
  if (!wanted.length) throw new UsageError('--outputs names no output');

  const results = await session.run(feeds, wanted).catch(ortError('run'));

  fs.mkdirSync(args['output-dir'], { recursive: true });
  const files = fileNames(wanted);
  const index = {};
  for (const name of wanted) {
    const t = results[name];
    const file = files.get(name);
    const dims = Array.from(t.dims, Number);
    try {
      writeNpy(path.join(args['output-dir'], file), { dtype: t.type, shape: dims, data: t.data });
    } catch (e) {
      throw new Error(`output '${name}': ${e.message}`);
    }
    index[name] = { file, shape: dims, dtype: t.type };
  }
  const json = Object.entries(index).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n');
  writeFileAtomic(path.join(args['output-dir'], 'outputs.json'), `{\n${json}\n}\n`);
  await session.release();
}

main().catch((e) => {
  const msg = String(e && e.message ? e.message : e).replace(/\s*\n\s*/g, ' ').trim();
  process.stderr.write(`ort_run: ${msg}${e instanceof UsageError || e?.code?.startsWith?.('ERR_PARSE_ARGS') ? ' (see --help)' : ''}\n`);
  process.exit(1);
});
