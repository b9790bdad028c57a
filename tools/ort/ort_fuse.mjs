#!/usr/bin/env node
// Writes the graph ONNX Runtime (CPU) runs after its graph optimizations, e.g. a QDQ model with
// its node units fused into QLinearConv and the com.microsoft QLinearAdd / QGemm / ... ops:
// the files octet's loader must accept, written by ORT itself.
//
//   node tools/ort/ort_fuse.mjs --model M.onnx --out FUSED.onnx [--graph-opt basic|extended]
//
// `extended` (the default) applies the QDQ fusions but not the layout transformations of
// `all`, whose NHWC contrib ops are internal to ORT's CPU provider. Errors print one line on
// stderr and exit 1.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError, loadOrt, ortError, printHelp, runMain } from './session.mjs';

async function main() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      model: { type: 'string' },
      out: { type: 'string' },
      'graph-opt': { type: 'string', default: 'extended' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    printHelp(import.meta.url);
    return;
  }
  if (!values.model) throw new UsageError('--model is required');
  if (!values.out) throw new UsageError('--out is required');
  if (!['basic', 'extended'].includes(values['graph-opt']))
    throw new UsageError(`--graph-opt must be basic or extended, got '${values['graph-opt']}'`);
  if (!fs.existsSync(values.model)) throw new Error(`${values.model}: no such model file`);

  const { ort } = loadOrt();
  fs.rmSync(values.out, { force: true });
  const session = await ort.InferenceSession.create(values.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: values['graph-opt'],
    optimizedModelFilePath: values.out,
  }).catch(ortError(values.model, 'load'));
  await session.release();
  if (!fs.existsSync(values.out)) throw new Error(`${values.model}: onnxruntime wrote no optimized model`);
}

runMain('ort_fuse', main);
