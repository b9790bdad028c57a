#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) over a whole data set, batch by batch, and times every
// batch: the ONNX Runtime side of `octet eval --compare-ort`.
//
//   node tools/ort/ort_eval.mjs --model M.onnx --input NAME=ALL.npy --batch B --output-dir DIR
//        [--threads T] [--graph-opt disabled|basic|extended|all] [--warmup W] [--repeat R]
//        [--limit-timing K] [--progress] [--u8s8 exact|native]
//   node tools/ort/ort_eval.mjs --version     # prints the ONNX Runtime version, or why it cannot load
//
// ALL.npy holds every image along dim 0 (e.g. [10000,1,28,28] float32); the model runs on rows
// [0,B), [B,2B), ... (the last batch may be smaller), one session.run at a time. The session is
// ort_run.mjs's: T intra-op threads (default 1), one inter-op thread, sequential execution.
// Timing: W untimed warm-up runs on the first batch (default 3), then R passes over the data
// (default 1) in which each awaited session.run is timed alone with process.hrtime.bigint().
// --limit-timing K times only the first K batches of each pass: the first pass still runs every
// batch (untimed after the K-th) for the outputs, later passes stop after K batches.
// Outputs come from the first pass.
//
// Writes DIR/<sanitized output name>.npy for every model output, concatenated over the batches in
// order (dim 0 of each output must be the batch's image count); DIR/timings.json
// ({"ort_version", "batch", "threads", "batch_ms": [wall ms of each timed run, in order],
// "images_per_timed_run": [images in that run], ...}); then DIR/outputs.json as ort_run.mjs
// writes it, last, so its presence means the run finished. Progress lines
// ("ort_eval: progress ...") go to stderr when it is a terminal or with --progress.
// --u8s8 exact (default) sets ORT's session.x64quantprecision on x86 CPUs without VNNI, so
// uint8 x int8 products with constant weights are exact there too (with VNNI ORT's own kernels
// are exact); native runs ORT's default, whose VPMADDUBSW kernels saturate pair sums at int16
// without VNNI (session.mjs, createSession).
// Errors print one line on stderr and exit 1.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SUPPORTED_DTYPES, readNpy, writeNpy } from './npy.mjs';
import {
  UsageError, checkInputNames, createSession, fileNames, graphOptOption, inputSpec, intOption, loadOrt, u8s8Option,
  ortError, printHelp, runMain, writeJsonAtomic,
} from './session.mjs';

function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      input: { type: 'string', multiple: true, default: [] },
      batch: { type: 'string' },
      'output-dir': { type: 'string' },
      threads: { type: 'string', default: '1' },
      'graph-opt': { type: 'string', default: 'all' },
      u8s8: { type: 'string', default: 'exact' },
      warmup: { type: 'string', default: '3' },
      repeat: { type: 'string', default: '1' },
      'limit-timing': { type: 'string' },
      progress: { type: 'boolean', default: false },
      version: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help || values.version) return values;
  if (!values.model) throw new UsageError('--model is required');
  if (values.input.length !== 1) {
    throw new UsageError(`--input NAME=ALL.npy is required exactly once, got it ${values.input.length} times`);
  }
  [values.inputName, values.inputFile] = inputSpec(values.input[0]);
  if (values.batch === undefined) throw new UsageError('--batch is required');
  if (!values['output-dir']) throw new UsageError('--output-dir is required');
  values.batch = intOption('--batch', values.batch);
  values.threads = intOption('--threads', values.threads);
  graphOptOption(values['graph-opt']);
  u8s8Option(values.u8s8);
  values.warmup = intOption('--warmup', values.warmup, 0);
  values.repeat = intOption('--repeat', values.repeat);
  values.limitTiming = values['limit-timing'] === undefined ? null : intOption('--limit-timing', values['limit-timing'], 0);
  return values;
}

const product = (dims) => dims.reduce((a, b) => a * b, 1);
const shapeText = (dims) => `(${dims.join(', ')})`;

// One line on stderr each time another tenth of the runs is done.
function progressReporter(enabled, total) {
  const start = process.hrtime.bigint();
  let done = 0;
  let shown = 0;
  return (what) => {
    done++;
    if (!enabled) return;
    const tenth = Math.floor((done * 10) / total);
    if (tenth <= shown) return;
    shown = tenth;
    const s = (Number(process.hrtime.bigint() - start) / 1e9).toFixed(1);
    process.stderr.write(`ort_eval: progress ${done}/${total} runs (${Math.floor((done * 100) / total)}%), ${what}, ${s} s\n`);
  };
}

// Collects one output over the batches into a single array of `images` rows.
class Concat {
  constructor(name, images) {
    this.name = name;
    this.images = images;
    this.filled = 0;
  }

  add(t, rows) {
    const dims = Array.from(t.dims, Number);
    if (!SUPPORTED_DTYPES.includes(t.type)) {
      throw new Error(`output '${this.name}' is ${t.type}, which .npy files here cannot hold`);
    }
    if (dims.length === 0 || dims[0] !== rows) {
      throw new Error(`output '${this.name}' has shape ${shapeText(dims)} for a batch of ${rows} images; ` +
        'ort_eval needs dim 0 of every output to be the batch');
    }
    if (!this.data) {
      this.type = t.type;
      this.tail = dims.slice(1);
      this.rowSize = product(this.tail);
      this.data = new t.data.constructor(this.images * this.rowSize);
    } else if (t.type !== this.type || shapeText(dims.slice(1)) !== shapeText(this.tail)) {
      throw new Error(`output '${this.name}' is ${t.type} ${shapeText(dims)} in one batch but ${this.type} ` +
        `${shapeText([rows, ...this.tail])} in an earlier one; cannot concatenate`);
    }
    this.data.set(t.data, this.filled * this.rowSize);
    this.filled += rows;
  }

  array() {
    return { dtype: this.type, shape: [this.filled, ...this.tail], data: this.data };
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
  const outDir = args['output-dir'];
  if (!fs.existsSync(args.model)) throw new Error(`${args.model}: no such model file`);
  // Stale results from an earlier run must not make a failed run look finished.
  for (const f of ['outputs.json', 'timings.json']) fs.rmSync(path.join(outDir, f), { force: true });

  const all = readNpy(args.inputFile);
  if (all.shape.length === 0) throw new Error(`${args.inputFile}: a scalar has no images along dim 0`);
  const images = all.shape[0];
  if (images === 0) throw new Error(`${args.inputFile} holds no images (shape ${shapeText(all.shape)})`);

  const session = await createSession(ort, args.model, { threads: args.threads, graphOpt: args['graph-opt'], u8s8: args.u8s8 });
  checkInputNames(session, args.model, [args.inputName]);
  const fetches = session.outputNames;

  // One feed per batch, each a view into the whole array (no copy).
  const tail = all.shape.slice(1);
  const rowSize = product(tail);
  const batches = [];
  for (let start = 0; start < images; start += args.batch) {
    const end = Math.min(images, start + args.batch);
    const tensor = new ort.Tensor(all.dtype, all.data.subarray(start * rowSize, end * rowSize), [end - start, ...tail]);
    batches.push({ start, end, feeds: { [args.inputName]: tensor } });
  }
  const run = ({ start, end, feeds }) =>
    session.run(feeds, fetches).catch(ortError(args.model, `run on images ${start}..${end - 1}`));

  const timedPerPass = args.limitTiming === null ? batches.length : Math.min(args.limitTiming, batches.length);
  const totalRuns = args.warmup + batches.length + (args.repeat - 1) * timedPerPass;
  const tick = progressReporter(args.progress || process.stderr.isTTY === true, totalRuns);

  for (let w = 0; w < args.warmup; w++) {
    await run(batches[0]);
    tick(`warm-up ${w + 1}/${args.warmup}`);
  }
  const outputs = fetches.map((name) => new Concat(name, images));
  const batchMs = [];
  const imagesPerRun = [];
  for (let pass = 0; pass < args.repeat; pass++) {
    const count = pass === 0 ? batches.length : timedPerPass;
    for (let i = 0; i < count; i++) {
      const b = batches[i];
      const t0 = process.hrtime.bigint();
      const result = await run(b);
      const t1 = process.hrtime.bigint();
      if (i < timedPerPass) {
        batchMs.push(Number(t1 - t0) / 1e6);
        imagesPerRun.push(b.end - b.start);
      }
      if (pass === 0) outputs.forEach((o) => o.add(result[o.name], b.end - b.start));
      tick(`pass ${pass + 1}/${args.repeat}, images ${b.end}/${pass === 0 ? images : batches[count - 1].end}`);
    }
  }

  fs.mkdirSync(outDir, { recursive: true });
  const files = fileNames(fetches);
  const index = {};
  for (const o of outputs) {
    const a = o.array();
    const file = files.get(o.name);
    try {
      writeNpy(path.join(outDir, file), a);
    } catch (e) {
      throw new Error(`output '${o.name}': ${e.message}`);
    }
    index[o.name] = { file, shape: a.shape, dtype: a.dtype };
  }
  writeJsonAtomic(path.join(outDir, 'timings.json'), {
    ort_version: version,
    model: args.model,
    input: args.inputName,
    images,
    batch: args.batch,
    threads: args.threads,
    graph_opt: args['graph-opt'],
    warmup: args.warmup,
    repeat: args.repeat,
    limit_timing: args.limitTiming,
    batch_ms: batchMs,
    images_per_timed_run: imagesPerRun,
  });
  writeJsonAtomic(path.join(outDir, 'outputs.json'), index);
  await session.release();
}

runMain('ort_eval', main);
