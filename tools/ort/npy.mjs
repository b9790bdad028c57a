// .npy reading and writing for the ONNX Runtime runner (and for tests that need a file
// written by something other than octet's own C++ writer).
//
// Supported: format versions 1, 2 and 3, little-endian, C order, dtypes f4 f8 u1 i1 i4 i8 b1.
// This mirrors io/npy.cc; both reject what they do not understand instead of guessing.
// An array is { dtype, shape, data } with dtype a numpy name ('float32', ...), shape an array
// of numbers and data a typed array (Uint8Array for bool, BigInt64Array for int64).

import fs from 'node:fs';
import path from 'node:path';

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

// descr kind+size -> dtype; '|' and '=' and '<' are all little-endian on the hosts we run on.
const DTYPES = {
  f4: { name: 'float32', size: 4, Array: Float32Array },
  f8: { name: 'float64', size: 8, Array: Float64Array },
  u1: { name: 'uint8', size: 1, Array: Uint8Array },
  i1: { name: 'int8', size: 1, Array: Int8Array },
  i4: { name: 'int32', size: 4, Array: Int32Array },
  i8: { name: 'int64', size: 8, Array: BigInt64Array },
  b1: { name: 'bool', size: 1, Array: Uint8Array },
};
const BY_NAME = Object.fromEntries(Object.entries(DTYPES).map(([code, d]) => [d.name, { ...d, code }]));

export const SUPPORTED_DTYPES = Object.keys(BY_NAME);

export class NpyError extends Error {}

// Parses the Python-literal header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
function parseHeader(text) {
  let i = 0;
  const ws = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  const expect = (c) => {
    ws();
    if (text[i] !== c) throw new NpyError(`bad header: expected '${c}' at offset ${i} in ${JSON.stringify(text)}`);
    i++;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new NpyError('bad header: unterminated string');
      const s = text.slice(i + 1, end);
      i = end + 1;
      return s;
    }
    if (c === '(') {
      i++;
      const dims = [];
      for (;;) {
        ws();
        if (text[i] === ')') { i++; return dims; }
        const m = /^\d+L?/.exec(text.slice(i));
        if (!m) throw new NpyError(`bad header: bad shape entry at offset ${i}`);
        dims.push(Number.parseInt(m[0], 10));
        i += m[0].length;
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== ')') throw new NpyError('bad header: bad shape tuple');
      }
    }
    for (const [word, v] of [['True', true], ['False', false]]) {
      if (text.startsWith(word, i)) { i += word.length; return v; }
    }
    throw new NpyError(`bad header: unexpected value at offset ${i}`);
  };
  const dict = {};
  expect('{');
  for (;;) {
    ws();
    if (text[i] === '}') break;
    const key = value();
    if (typeof key !== 'string') throw new NpyError('bad header: key is not a string');
    expect(':');
    dict[key] = value();
    ws();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new NpyError('bad header: expected , or }');
  }
  for (const k of ['descr', 'fortran_order', 'shape']) {
    if (!(k in dict)) throw new NpyError(`bad header: missing '${k}'`);
  }
  return dict;
}

function dtypeFromDescr(descr) {
  if (typeof descr !== 'string' || descr.length < 2) throw new NpyError(`unsupported dtype ${JSON.stringify(descr)}`);
  const order = descr[0];
  const code = descr.slice(1);
  const d = DTYPES[code];
  if (!'<>|='.includes(order) || !d) {
    throw new NpyError(`unsupported dtype '${descr}' (supported: <f4 <f8 |u1 |i1 <i4 <i8 |b1)`);
  }
  if (order === '>' && d.size > 1) throw new NpyError(`unsupported dtype '${descr}': big-endian data`);
  return d;
}

const product = (shape) => shape.reduce((a, b) => a * b, 1);

// Decodes a whole .npy file held in a Buffer; `where` names it in errors.
export function decodeNpy(buf, where = '<buffer>') {
  try {
    if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) throw new NpyError('not a .npy file (bad magic)');
    const major = buf[6];
    let headerLen;
    let start;
    if (major === 1) { headerLen = buf.readUInt16LE(8); start = 10; }
    else if (major === 2 || major === 3) {
      if (buf.length < 12) throw new NpyError('truncated header');
      headerLen = buf.readUInt32LE(8); start = 12;
    } else throw new NpyError(`unsupported .npy format version ${major}.${buf[7]}`);
    if (buf.length < start + headerLen) {
      throw new NpyError(`truncated header: need ${start + headerLen} bytes, file has ${buf.length}`);
    }
    const header = parseHeader(buf.subarray(start, start + headerLen).toString(major === 3 ? 'utf8' : 'latin1'));
    const d = dtypeFromDescr(header.descr);
    if (header.fortran_order !== false) throw new NpyError('Fortran-order arrays are not supported');
    if (!Array.isArray(header.shape)) throw new NpyError('bad header: shape is not a tuple');
    const shape = header.shape;
    const want = product(shape) * d.size;
    const have = buf.length - start - headerLen;
    if (have < want) {
      throw new NpyError(`truncated data: shape (${shape.join(', ')}) ${d.name} needs ${want} bytes, file has ${have}`);
    }
    if (have > want) {
      throw new NpyError(`${have - want} unexpected bytes after the data of shape (${shape.join(', ')}) ${d.name}`);
    }
    // Copy into a fresh ArrayBuffer: the payload offset is not necessarily aligned for the typed array.
    const off = buf.byteOffset + start + headerLen;
    const data = new d.Array(buf.buffer.slice(off, off + want));
    return { dtype: d.name, shape, data };
  } catch (e) {
    if (e instanceof NpyError) throw new NpyError(`${where}: ${e.message}`);
    throw e;
  }
}

export function readNpy(file) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new NpyError(`${file}: cannot read: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
  return decodeNpy(buf, file);
}

// Encodes { dtype, shape, data } as a version 1 .npy (version 2 if the header is huge).
export function encodeNpy({ dtype, shape, data }) {
  const d = BY_NAME[dtype];
  if (!d) throw new NpyError(`cannot write dtype '${dtype}' (supported: ${SUPPORTED_DTYPES.join(', ')})`);
  const count = product(shape);
  if (data.length !== count) throw new NpyError(`shape (${shape.join(', ')}) needs ${count} values, got ${data.length}`);
  const descr = (d.size === 1 ? '|' : '<') + d.code;
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  let major = 1;
  let prefix = 10;
  if (dict.length + 1 + 64 > 0xffff) { major = 2; prefix = 12; }
  // Pad with spaces so the data starts on a 64-byte boundary, as numpy does.
  const total = Math.ceil((prefix + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - prefix - 1, ' ') + '\n';
  const head = Buffer.alloc(prefix);
  MAGIC.copy(head, 0);
  head[6] = major;
  head[7] = 0;
  if (major === 1) head.writeUInt16LE(dict.length, 8);
  else head.writeUInt32LE(dict.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([head, Buffer.from(dict, 'latin1'), body]);
}

// Writes via a temporary file in the same directory and a rename, so readers never see half a file.
export function writeFileAtomic(file, bytes) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  try {
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw new NpyError(`${file}: cannot write: ${e.message}`);
  }
}

export function writeNpy(file, array) {
  writeFileAtomic(file, encodeNpy(array));
}
