#include "io/npy.h"

#include "io/output_file.h"

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <variant>

// The raw data is copied as is: it is little-endian on disk and must be so in memory.
static_assert(std::endian::native == std::endian::little, "octet::npy assumes a little-endian host");

namespace octet::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

struct DTypeInfo {
  DType dtype;
  const char* code;  // descr without the byte-order character
  const char* name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::f32, "f4", "float32", 4}, {DType::f64, "f8", "float64", 8}, {DType::u8, "u1", "uint8", 1},
    {DType::s8, "i1", "int8", 1},     {DType::s32, "i4", "int32", 4},   {DType::s64, "i8", "int64", 8},
    {DType::b8, "b1", "bool", 1},
};

const DTypeInfo& info(DType d) {
  for (const auto& i : kDTypes)
    if (i.dtype == d) return i;
  throw std::logic_error("npy: invalid DType value");
}

// Errors inside the decoder carry only the reason; read()/decode() prefix the source.
struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Element count, or throws if it would overflow what the buffer can hold.
int64_t checked_count(const std::vector<int64_t>& shape, std::size_t item) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Bad("negative dimension in shape " + shape_text(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(item) / d)
      throw Bad("shape " + shape_text(shape) + " is too large");
    n *= d;
  }
  return n;
}

// A header quoted in an error: printable, one line, at most 80 characters (a hostile header
// can be 4 GiB of anything).
std::string header_excerpt(const std::string& text) {
  constexpr std::size_t kShown = 80;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out += std::isprint(c) ? static_cast<char>(c) : '?';
  }
  while (!out.empty() && (out.back() == '?' || out.back() == ' ')) out.pop_back();  // padding and the final newline
  if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
using Value = std::variant<std::string, bool, std::vector<int64_t>>;

class HeaderParser {
 public:
  explicit HeaderParser(std::string text) : s_(std::move(text)) {}

  std::map<std::string, Value> dict() {
    std::map<std::string, Value> out;
    expect('{');
    for (;;) {
      ws();
      if (peek() == '}') break;
      Value key = value();
      if (!std::holds_alternative<std::string>(key)) fail("a key is not a string");
      expect(':');
      out[std::get<std::string>(key)] = value();
      ws();
      if (peek() == ',') ++i_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Bad("malformed header (" + why + " at offset " + std::to_string(i_) + "): " + header_excerpt(s_));
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  Value value() {
    ws();
    char c = peek();
    if (c == '\'' || c == '"') {
      std::size_t end = s_.find(c, i_ + 1);
      if (end == std::string::npos) fail("unterminated string");
      std::string v = s_.substr(i_ + 1, end - i_ - 1);
      i_ = end + 1;
      return v;
    }
    if (c == '(') {
      ++i_;
      std::vector<int64_t> dims;
      for (;;) {
        ws();
        if (peek() == ')') {
          ++i_;
          return dims;
        }
        if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("bad shape entry");
        int64_t d = 0;
        while (std::isdigit(static_cast<unsigned char>(peek()))) {
          if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
          d = d * 10 + (s_[i_++] - '0');
        }
        if (peek() == 'L') ++i_;  // Python 2 long suffix
        dims.push_back(d);
        ws();
        if (peek() == ',') ++i_;
        else if (peek() != ')') fail("bad shape tuple");
      }
    }
    for (auto [word, v] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return v;
      }
    }
    fail("unexpected value");
  }

  std::string s_;
  std::size_t i_ = 0;
};

const DTypeInfo& dtype_from_descr(const std::string& descr) {
  if (descr.size() >= 2) {
    char order = descr[0];
    std::string code = descr.substr(1);
    for (const auto& i : kDTypes) {
      if (code != i.code || std::strchr("<>|=", order) == nullptr) continue;
      if (order == '>' && i.size > 1) throw Bad("unsupported dtype '" + descr + "': big-endian data");
      return i;
    }
  }
  throw Bad("unsupported dtype '" + descr + "' (supported: <f4 <f8 |u1 |i1 <i4 <i8 |b1)");
}

uint32_t le(const std::vector<std::byte>& b, std::size_t at, int n) {
  uint32_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | std::to_integer<uint32_t>(b[at + k]);
  return v;
}

std::runtime_error located(const std::string& where, const std::string& why) {
  return std::runtime_error(where + ": " + why);
}

}  // namespace

std::string dtype_name(DType d) { return info(d).name; }
std::size_t dtype_size(DType d) { return info(d).size; }

int64_t Array::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void Array::check_as(DType wanted) const {
  if (wanted == dtype || (wanted == DType::u8 && dtype == DType::b8)) return;
  throw std::logic_error("npy::Array::as<" + dtype_name(wanted) + ">() on a " + dtype_name(dtype) + " array");
}

Array make(DType dtype, std::vector<int64_t> shape) {
  Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  try {
    a.data.resize(static_cast<std::size_t>(checked_count(a.shape, dtype_size(dtype))) * dtype_size(dtype));
  } catch (const Bad& e) {
    throw std::invalid_argument(std::string("npy::make: ") + e.what());
  }
  return a;
}

Array make_f32(std::vector<int64_t> shape, std::vector<float> values) {
  return make_array<float>(std::move(shape), values);
}

std::string describe(const Array& a) { return shape_text(a.shape) + " " + dtype_name(a.dtype); }

Array decode(const std::vector<std::byte>& b, const std::string& where) {
  try {
    if (b.size() < kMagicLen + 4 || std::memcmp(b.data(), kMagic, kMagicLen) != 0)
      throw Bad("not a .npy file (bad magic)");
    const int major = std::to_integer<int>(b[6]);
    std::size_t start = 0, header_len = 0;
    if (major == 1) {
      header_len = le(b, 8, 2);
      start = 10;
    } else if (major == 2 || major == 3) {
      if (b.size() < 12) throw Bad("truncated header");
      header_len = le(b, 8, 4);
      start = 12;
    } else {
      throw Bad("unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(std::to_integer<int>(b[7])));
    }
    if (b.size() < start + header_len)
      throw Bad("truncated header: needs " + std::to_string(start + header_len) + " bytes, file has " +
                std::to_string(b.size()));
    // Version 3 only widens the header's encoding to UTF-8; the keys we read are ASCII either way.
    std::string text(reinterpret_cast<const char*>(b.data() + start), header_len);
    auto dict = HeaderParser(text).dict();
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (!dict.count(key)) throw Bad(std::string("malformed header: no '") + key + "': " + header_excerpt(text));
    const auto* descr = std::get_if<std::string>(&dict["descr"]);
    const auto* fortran = std::get_if<bool>(&dict["fortran_order"]);
    const auto* shape = std::get_if<std::vector<int64_t>>(&dict["shape"]);
    if (!descr || !fortran || !shape) throw Bad("malformed header: wrong value types: " + header_excerpt(text));
    const DTypeInfo& dt = dtype_from_descr(*descr);
    if (*fortran) throw Bad("Fortran-order (fortran_order: True) arrays are not supported");

    Array a;
    a.dtype = dt.dtype;
    a.shape = *shape;
    const auto want = static_cast<std::size_t>(checked_count(a.shape, dt.size)) * dt.size;
    const std::size_t have = b.size() - start - header_len;
    if (have < want)
      throw Bad("truncated data: " + describe(a) + " needs " + std::to_string(want) + " bytes, file has " +
                std::to_string(have));
    if (have > want)
      throw Bad(std::to_string(have - want) + " unexpected bytes after the data of " + describe(a));
    a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(start + header_len), b.end());
    return a;
  } catch (const Bad& e) {
    throw located(where, e.what());
  }
}

std::vector<std::byte> encode(const Array& a) {
  const DTypeInfo& dt = info(a.dtype);
  int64_t n = 0;
  try {
    n = checked_count(a.shape, dt.size);
  } catch (const Bad& e) {
    throw std::invalid_argument(std::string("npy::encode: ") + e.what());
  }
  if (a.data.size() != static_cast<std::size_t>(n) * dt.size)
    throw std::invalid_argument("npy::encode: " + describe(a) + " needs " + std::to_string(n * dt.size) +
                                " bytes of data, has " + std::to_string(a.data.size()));
  std::string header = std::string("{'descr': '") + (dt.size == 1 ? '|' : '<') + dt.code +
                       "', 'fortran_order': False, 'shape': " + shape_text(a.shape) + ", }";
  // Pad with spaces and a newline so the data starts on a 64-byte boundary, as numpy does.
  std::size_t prefix = header.size() + 1 + 64 > 0xffff ? 12 : 10;
  std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::vector<std::byte> out(prefix);
  std::memcpy(out.data(), kMagic, kMagicLen);
  out[6] = std::byte{static_cast<unsigned char>(prefix == 10 ? 1 : 2)};
  out[7] = std::byte{0};
  for (std::size_t k = 0; k < prefix - 8; ++k)
    out[8 + k] = std::byte{static_cast<unsigned char>((header.size() >> (8 * k)) & 0xff)};
  const auto* h = reinterpret_cast<const std::byte*>(header.data());
  out.insert(out.end(), h, h + header.size());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

Array read(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw located(path, "cannot open: no such file");
  if (std::filesystem::is_directory(path, ec)) throw located(path, "cannot open: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw located(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::byte> bytes;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw located(path, "cannot determine the file size");
  bytes.resize(static_cast<std::size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw located(path, "read error");
  return decode(bytes, path);
}

void write(const std::string& path, const Array& a) {
  std::vector<std::byte> bytes;
  try {
    bytes = encode(a);
  } catch (const std::invalid_argument& e) {
    throw located(path, e.what());
  }
  write_file_atomically(path, bytes);
}

}  // namespace octet::npy
