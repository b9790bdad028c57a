#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) on .npy inputs and writes every output as .npy:
// the reference oracle octet's tests and tools compare against.
//
//   node tools/ort/ort_run.mjs --model M.onnx --input NAME=FILE.npy [--input ...] --output-dir DIR
//        [--threads N] [--graph-opt disabled|basic|extended|all] [--outputs name1,name2] [--u8s8 exact|native]
//   node tools/ort/ort_run.mjs --version      # prints the ONNX Runtime version, or why it cannot load
//   node tools/ort/ort_run.mjs --jobs         # one process for many runs (tools/ort/ort_client.cc)
//
// DIR/<sanitized output name>.npy for each output, then DIR/outputs.json
// ({"<output name>": {"file": "x.npy", "shape": [..], "dtype": "float32"}, ...}), written last,
// so its presence means the run finished. --u8s8 exact (default) sets ORT's
// session.x64quantprecision on x86 CPUs without VNNI, so uint8 x int8 products with constant
// weights are exact there too (with VNNI ORT's own kernels are exact); native runs ORT's
// default, whose VPMADDUBSW kernels saturate pair sums at int16 without VNNI (session.mjs,
// createSession). Errors print one line on stderr and exit 1.
//
// --jobs keeps one process, and ONNX Runtime loaded once, for many runs: it prints
// "onnxruntime-node <version>" and then reads one JSON array of the arguments above per line
// on stdin, answering each with one line on stdout, {"ok": true} or {"error": "<message>"},
// until stdin ends. Starting node and loading ONNX Runtime costs about 0.3 s, more than most
// of the runs the tests make.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { readNpy, writeNpy } from './npy.mjs';
import {
  UsageError, checkInputNames, createSession, errorLine, fileNames, graphOptOption, inputSpec, intOption, loadOrt, u8s8Option,
  ortError, printHelp, runMain, writeJsonAtomic,
} from './session.mjs';

function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      input: { type: 'string', multiple: true, default: [] },
      'output-dir': { type: 'string' },
      threads: { type: 'string', default: '1' },
      'graph-opt': { type: 'string', default: 'all' },
      u8s8: { type: 'string', default: 'exact' },
      outputs: { type: 'string' },
      version: { type: 'boolean', default: false },
      jobs: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help || values.version || values.jobs) return values;
  if (!values.model) throw new UsageError('--model is required');
  if (!values['output-dir']) throw new UsageError('--output-dir is required');
  values.threads = intOption('--threads', values.threads);
  graphOptOption(values['graph-opt']);
  u8s8Option(values.u8s8);
  values.inputs = new Map();
  for (const spec of values.input) {
    const [name, file] = inputSpec(spec);
    if (values.inputs.has(name)) throw new UsageError(`--input ${name} given twice`);
    values.inputs.set(name, file);
  }
  return values;
}

// One run: the model on its inputs, every wanted output written to the output directory.
async function runOnce(ort, args) {
  if (!fs.existsSync(args.model)) throw new Error(`${args.model}: no such model file`);
  // A stale index from an earlier run must not make a failed run look finished.
  fs.rmSync(path.join(args['output-dir'], 'outputs.json'), { force: true });

  const session = await createSession(ort, args.model, { threads: args.threads, graphOpt: args['graph-opt'], u8s8: args.u8s8 });
  try {
    await runSession(ort, session, args);
  } finally {
    await session.release();
  }
}

async function runSession(ort, session, args) {
  checkInputNames(session, args.model, [...args.inputs.keys()]);

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

  const results = await session.run(feeds, wanted).catch(ortError(args.model, 'run'));

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
  writeJsonAtomic(path.join(args['output-dir'], 'outputs.json'), index);
}

// --jobs: runs one argument list per stdin line, in order, one answer line each.
async function serveJobs(ort, version) {
  process.stdout.write(`onnxruntime-node ${version}\n`);
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let answer;
    try {
      const argv = JSON.parse(line);
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
        throw new UsageError('a job is a JSON array of strings');
      }
      const args = parseCli(argv);
      if (args.help || args.version || args.jobs) throw new UsageError('a job is one run');
      await runOnce(ort, args);
      answer = { ok: true };
    } catch (e) {
      answer = { error: errorLine(e) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
}

async function main() {
  const args = parseCli(process.argv.slice(2));
  if (args.help) {
    printHelp(import.meta.url);
    return;
  }
  const { ort, version } = loadOrt();
  if (args.version) {
    process.stdout.write(`onnxruntime-node ${version}\n`);
    return;
  }
  if (args.jobs) {
    await serveJobs(ort, version);
    return;
  }
  await runOnce(ort, args);
}

runMain('ort_run', main);
