#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) with its profiler on and writes the profile: the ORT
// half of bench/layer_vs_ort.py (per-layer time, octet vs ORT).
//
//   node tools/ort/ort_profile.mjs --model M.onnx --shape NAME=1x3x224x224 [--shape ...]
//        --prefix DIR/ort [--runs 20] [--warmup 5] [--threads 1] [--graph-opt all]
//
// Every input is float32, uniform in [0, 1) from a fixed seed. The session is the one octet's
// comparisons use (session.mjs, createSession) with enableProfiling; ORT writes its Chrome-trace
// JSON when the session is released, and this prints its path on stdout. Each run's node
// events follow one "model_run" event, so the caller can drop the warm-up runs.
// Errors print one line on stderr and exit 1.

import { parseArgs } from 'node:util';
import { UsageError, createSession, graphOptOption, intOption, loadOrt, printHelp, runMain } from './session.mjs';

function shapeSpec(spec) {
  const m = /^(.+)=([0-9]+(?:x[0-9]+)*)$/.exec(spec);
  if (!m) throw new UsageError(`--shape wants NAME=DxDx..., got '${spec}'`);
  return [m[1], m[2].split('x').map(Number)];
}

async function main() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      shape: { type: 'string', multiple: true, default: [] },
      prefix: { type: 'string' },
      runs: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '5' },
      threads: { type: 'string', default: '1' },
      'graph-opt': { type: 'string', default: 'all' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return printHelp(import.meta.url);
  if (!values.model) throw new UsageError('--model is required');
  if (!values.prefix) throw new UsageError('--prefix is required');
  const runs = intOption('--runs', values.runs);
  const warmup = intOption('--warmup', values.warmup, 0);
  const threads = intOption('--threads', values.threads);
  graphOptOption(values['graph-opt']);
  const { ort } = loadOrt();
  const session = await createSession(ort, values.model, {
    threads, graphOpt: values['graph-opt'], extra: { enableProfiling: true, profileFilePrefix: values.prefix },
  });
  let seed = 12345;
  const feeds = {};
  for (const spec of values.shape) {
    const [name, dims] = shapeSpec(spec);
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      data[i] = (seed >>> 8) / (1 << 24);
    }
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  for (let r = 0; r < warmup + runs; r++) await session.run(feeds);
  const file = session.endProfiling ? session.endProfiling() : undefined;
  await session.release();
  process.stdout.write(`${file ?? ''}\n`);
}

runMain('ort_profile', main);
