// Follows ONNX Runtime's shape knowledge of a graph, as its session builds it before the NCHWc
// layout pass (docs/kernels.md, "Float AveragePool and ORT's NCHWc layout"):
//  - graph resolution runs each ONNX operator's shape inference, where an input's *data* is
//    visible only when it is a constant (initializer, Constant node, or a node constant folding
//    replaces) or a shape value that data propagation computed with every element known; a
//    symbolic dimension never travels through data;
//  - data propagation is ONNX's own per operator, except that ORT computes scalar shape values
//    itself for Size, Squeeze, Unsqueeze and (when ONNX's gives nothing) Gather, Add, Sub, Mul and
//    Div: a propagated scalar is what Shape -> Gather yields;
//  - constant folding turns a node whose inputs are all constant into a constant, and a Shape of
//    a fully known shape into one; Identity and a Cast to the same type disappear;
//  - the Reshape fusion replaces a Reshape target built by a Concat with a constant when each
//    piece is a constant, Shape -> Gather(i) -> Unsqueeze of the reshaped tensor itself at
//    position i (kept as 0), or one element of any origin (-1, at most one such piece); the
//    Reshape's output then knows every dimension but the -1.
// The graph is resolved again after every rewrite, as ORT does. A shape known once stays known.
#include "loader/ort_shapes.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace octet::loader {

bool is_onnx_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Integer tensors longer than this are weights, never shape arithmetic.
constexpr int64_t kMaxSmallInts = 1024;

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) if (a.name() == name) return &a;
  return nullptr;
}

std::optional<std::vector<int64_t>> read_ints(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  if (count < 0 || count > kMaxSmallInts) return std::nullopt;
  std::vector<int64_t> v;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      if (t.raw_data().size() != size_t(count) * 8) return std::nullopt;
      v.resize(size_t(count));
      std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    } else {
      v.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.has_raw_data()) {
      if (t.raw_data().size() != size_t(count) * 4) return std::nullopt;
      std::vector<int32_t> w(static_cast<size_t>(count));
      std::memcpy(w.data(), t.raw_data().data(), t.raw_data().size());
      v.assign(w.begin(), w.end());
    } else {
      v.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  if (int64_t(v.size()) != count) return std::nullopt;
  return v;
}


namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TensorShapeProto;
using onnx::TypeProto;


int64_t attr_i(const NodeProto& n, const std::string& name, int64_t fallback) {
  const AttributeProto* a = find_attr(n, name);
  return a && a->type() == AttributeProto::INT ? a->i() : fallback;
}


TensorProto make_ints(int32_t elem, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  TensorProto t;
  t.set_data_type(elem);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t x : v) {
    if (elem == TensorProto::INT32) t.add_int32_data(int32_t(x));
    else t.add_int64_data(x);
  }
  return t;
}

// What is known of one value.
struct Known {
  TypeProto type;                    // element type and shape, as far as known
  bool constant = false;             // ORT holds it as an initializer (after constant folding)
  const TensorProto* data = nullptr;  // its content, when constant and readable
  std::optional<TensorShapeProto> shape_values;  // propagated 1-D value, every element known
  std::optional<int64_t> scalar_value;           // propagated scalar value
};

bool has_shape(const TypeProto& t) { return t.has_tensor_type() && t.tensor_type().has_shape(); }

const TensorShapeProto* shape_of(const Known* k) {
  return k && has_shape(k->type) ? &k->type.tensor_type().shape() : nullptr;
}

std::optional<std::vector<int64_t>> concrete_dims(const TensorShapeProto* s) {
  if (!s) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : s->dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

// ORT merges an inferred type into what the file declared for the value: declared dimensions
// fill the ones inference leaves unknown.
void merge_declared(TypeProto& inferred, const TypeProto& declared) {
  if (!declared.has_tensor_type()) return;
  auto* it = inferred.mutable_tensor_type();
  const auto& dt = declared.tensor_type();
  if (it->elem_type() == 0) it->set_elem_type(dt.elem_type());
  if (!dt.has_shape()) return;
  if (!it->has_shape()) {
    *it->mutable_shape() = dt.shape();
    return;
  }
  if (it->shape().dim_size() != dt.shape().dim_size()) return;
  for (int i = 0; i < dt.shape().dim_size(); ++i) {
    auto* d = it->mutable_shape()->mutable_dim(i);
    const auto& e = dt.shape().dim(i);
    if (d->has_dim_value()) continue;
    if (e.has_dim_value()) d->set_dim_value(e.dim_value());
    else if (!d->has_dim_param() && e.has_dim_param()) d->set_dim_param(e.dim_param());
  }
}

// The view of one node's inputs that ORT's shape inference gets.
class InferContext final : public onnx::InferenceContext {
 public:
  InferContext(const NodeProto& n, std::vector<const Known*> in, size_t outputs)
      : n_(n), in_(std::move(in)), out_(outputs) {}
  const AttributeProto* getAttribute(const std::string& name) const override { return find_attr(n_, name); }
  size_t getNumInputs() const override { return in_.size(); }
  const TypeProto* getInputType(size_t i) const override {
    return i < in_.size() && in_[i] && in_[i]->type.value_case() != TypeProto::VALUE_NOT_SET ? &in_[i]->type : nullptr;
  }
  const TensorProto* getInputData(size_t i) const override {
    const Known* k = i < in_.size() ? in_[i] : nullptr;
    if (!k) return nullptr;
    if (k->constant) return k->data;
    if (k->shape_values && k->shape_values->dim_size() > 0) {
      std::vector<int64_t> v;
      for (const auto& d : k->shape_values->dim()) v.push_back(d.dim_value());
      return &temp_.emplace_back(make_ints(TensorProto::INT64, {int64_t(v.size())}, v));
    }
    if (k->scalar_value) return &temp_.emplace_back(make_ints(TensorProto::INT64, {}, {*k->scalar_value}));
    return nullptr;
  }
  // ORT gives no symbolic (partially known) data to shape inference.
  const TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }
  size_t getNumOutputs() const override { return out_.size(); }
  TypeProto* getOutputType(size_t i) override { return &out_.at(i); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override {
    throw std::runtime_error("subgraphs are not followed");
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  std::vector<TypeProto>& outputs() { return out_; }

 private:
  const NodeProto& n_;
  std::vector<const Known*> in_;
  std::vector<TypeProto> out_;
  mutable std::deque<TensorProto> temp_;
};

// ONNX's data propagation as ORT drives it: only propagated values are visible, never a
// constant's content.
class PropagateContext final : public onnx::DataPropagationContext {
 public:
  PropagateContext(const NodeProto& n, std::vector<const Known*> in, const std::vector<TypeProto>& out_types)
      : n_(n), in_(std::move(in)), out_types_(out_types), out_(out_types.size()) {}
  const AttributeProto* getAttribute(const std::string& name) const override { return find_attr(n_, name); }
  size_t getNumInputs() const override { return in_.size(); }
  const TypeProto* getInputType(size_t i) const override {
    return i < in_.size() && in_[i] && in_[i]->type.value_case() != TypeProto::VALUE_NOT_SET ? &in_[i]->type : nullptr;
  }
  size_t getNumOutputs() const override { return out_types_.size(); }
  const TypeProto* getOutputType(size_t i) const override { return i < out_types_.size() ? &out_types_[i] : nullptr; }
  const TensorShapeProto* getInputData(size_t i) override {
    const Known* k = i < in_.size() ? in_[i] : nullptr;
    return k && k->shape_values ? &*k->shape_values : nullptr;
  }
  void addOutputData(size_t i, TensorShapeProto&& s) override {
    if (i < out_.size()) out_[i] = std::move(s);
  }
  const std::optional<TensorShapeProto>& output(size_t i) const { return out_.at(i); }

 private:
  const NodeProto& n_;
  std::vector<const Known*> in_;
  const std::vector<TypeProto>& out_types_;
  std::vector<std::optional<TensorShapeProto>> out_;
};

// One resolution of the graph, in node order.
class Resolver {
 public:
  Resolver(const onnx::ModelProto& model, const std::vector<NodeProto>& nodes,
           const std::map<std::string, TensorProto>& fused)
      : nodes_(nodes) {
    for (const auto& o : model.opset_import()) opsets_[is_onnx_domain(o.domain()) ? "" : o.domain()] = o.version();
    const auto& g = model.graph();
    std::set<std::string> inputs;
    for (const auto& vi : g.input()) inputs.insert(vi.name());
    for (const auto& t : g.initializer()) {
      Known& k = values_[t.name()];
      auto* tt = k.type.mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto* s = tt->mutable_shape();
      for (int64_t d : t.dims()) s->add_dim()->set_dim_value(d);
      // An initializer that is also a graph input can be overridden: not a constant.
      if (!inputs.count(t.name())) {
        k.constant = true;
        k.data = &t;
      }
    }
    for (const auto& [name, t] : fused) set_constant(name, t);
    for (const auto& vi : g.input()) values_[vi.name()].type = vi.type();
    for (const auto& vi : g.output()) declared_[vi.name()] = &vi.type();
    for (const auto& vi : g.value_info()) declared_[vi.name()] = &vi.type();
  }

  void run() {
    for (const auto& n : nodes_) {
      try {
        resolve(n);
      } catch (const std::exception&) {
        // ORT would refuse such a node; what its outputs are is then moot.
      }
    }
  }

  const Known* find(const std::string& name) const {
    auto it = values_.find(name);
    return name.empty() || it == values_.end() ? nullptr : &it->second;
  }

 private:
  void set_constant(const std::string& name, const TensorProto& t) {
    const TensorProto& kept = owned_.emplace_back(t);
    Known& k = values_[name];
    k = Known{};
    k.constant = true;
    k.data = &kept;
    auto* tt = k.type.mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    auto* s = tt->mutable_shape();
    for (int64_t d : t.dims()) s->add_dim()->set_dim_value(d);
  }

  std::optional<std::vector<int64_t>> ints_of(const std::string& name) const {
    const Known* k = find(name);
    return k && k->constant && k->data ? read_ints(*k->data) : std::nullopt;
  }

  void resolve(const NodeProto& n) {
    std::vector<const Known*> in;
    for (const auto& name : n.input()) in.push_back(find(name));

    if (n.op_type() == "Constant" && is_onnx_domain(n.domain()) && n.output_size() == 1) {
      if (const AttributeProto* a = find_attr(n, "value")) return set_constant(n.output(0), a->t());
      if (const AttributeProto* a = find_attr(n, "value_ints"))
        return set_constant(n.output(0), make_ints(TensorProto::INT64, {a->ints_size()}, {a->ints().begin(), a->ints().end()}));
      if (const AttributeProto* a = find_attr(n, "value_int"))
        return set_constant(n.output(0), make_ints(TensorProto::INT64, {}, {a->i()}));
    }
    // Nodes ORT's rewrites remove, their output becoming their input.
    if (is_onnx_domain(n.domain()) && !in.empty() && in[0] && n.output_size() >= 1 &&
        (n.op_type() == "Identity" || (n.op_type() == "Dropout" && n.output_size() == 1) ||
         (n.op_type() == "Cast" && attr_i(n, "to", -1) == in[0]->type.tensor_type().elem_type()))) {
      values_[n.output(0)] = *in[0];
      return;
    }

    if (kernel_rank_differs(n, in)) return;
    const onnx::OpSchema* schema = is_onnx_domain(n.domain())
                                       ? onnx::OpSchemaRegistry::Schema(n.op_type(), opset(""), "")
                                       : onnx::OpSchemaRegistry::Schema(n.op_type(), opset(n.domain()), n.domain());
    InferContext ic(n, in, size_t(n.output_size()));
    if (schema && schema->has_type_and_shape_inference_function()) schema->GetTypeAndShapeInferenceFunction()(ic);
    std::vector<TypeProto>& out = ic.outputs();
    for (int i = 0; i < n.output_size(); ++i) {
      if (auto it = declared_.find(n.output(i)); it != declared_.end()) merge_declared(out[size_t(i)], *it->second);
      values_[n.output(i)].type = out[size_t(i)];
    }
    if (n.output_size() == 0) return;

    if (fold(n, in, out)) return;
    if (schema) propagate(n, *schema, in, out);
  }

  // ONNX's conv shape inference takes the kernel from the weights' dims and indexes the
  // per-axis attributes by the input's rank: weights of another rank read past the end of a
  // vector (a crash the loader fuzzer found, libonnx 1.12). ORT refuses such a node; its
  // outputs stay unknown here and the importer says what is wrong.
  static bool kernel_rank_differs(const NodeProto& n, const std::vector<const Known*>& in) {
    const std::string& op = n.op_type();
    if (op.size() < 4 || (op.compare(op.size() - 4, 4, "Conv") != 0 && op != "ConvInteger" && op != "ConvTranspose"))
      return false;
    const size_t w = op == "QLinearConv" ? 3 : 1;
    const TensorShapeProto* x = in.empty() ? nullptr : shape_of(in[0]);
    const TensorShapeProto* k = w < in.size() ? shape_of(in[w]) : nullptr;
    return x && k && x->dim_size() != k->dim_size();
  }

  int64_t opset(const std::string& domain) const {
    auto it = opsets_.find(domain);
    return it == opsets_.end() ? 1 : it->second;
  }

  // Constant folding. True when the node's outputs are constants.
  bool fold(const NodeProto& n, const std::vector<const Known*>& in, const std::vector<TypeProto>& out) {
    const std::string& op = n.op_type();
    if (!is_onnx_domain(n.domain())) return false;
    if (op == "Shape") {
      auto dims = in.empty() ? std::nullopt : concrete_dims(shape_of(in[0]));
      if (!dims) return false;
      const int64_t rank = int64_t(dims->size());
      auto clamp = [&](int64_t x) { return std::min(std::max(x < 0 ? x + rank : x, int64_t{0}), rank); };
      const int64_t b = clamp(attr_i(n, "start", 0)), e = clamp(attr_i(n, "end", rank));
      std::vector<int64_t> v(dims->begin() + b, dims->begin() + std::max(b, e));
      set_constant(n.output(0), make_ints(TensorProto::INT64, {int64_t(v.size())}, v));
      return true;
    }
    if (op.rfind("Random", 0) == 0 || op == "Multinomial" || in.empty()) return false;
    for (size_t i = 0; i < in.size(); ++i)
      if (!n.input(int(i)).empty() && !(in[i] && in[i]->constant)) return false;
    for (int i = 0; i < n.output_size(); ++i) {
      Known& k = values_[n.output(i)];
      k.constant = true;
      k.data = nullptr;
    }
    if (n.output_size() == 1)
      if (auto t = evaluate(n, out[0])) set_constant(n.output(0), *t);
    return true;
  }

  // The integer shape arithmetic constant folding computes; nullopt for anything else.
  std::optional<TensorProto> evaluate(const NodeProto& n, const TypeProto& out_type) const {
    const std::string& op = n.op_type();
    const auto out_dims = concrete_dims(has_shape(out_type) ? &out_type.tensor_type().shape() : nullptr);
    const int32_t elem = out_type.tensor_type().elem_type();
    if (!out_dims || (elem != TensorProto::INT64 && elem != TensorProto::INT32)) return std::nullopt;
    int64_t count = 1;
    for (int64_t d : *out_dims) count *= d;
    std::vector<std::optional<std::vector<int64_t>>> a;
    for (const auto& name : n.input()) a.push_back(name.empty() ? std::nullopt : ints_of(name));
    auto ok = [&](size_t i) { return i < a.size() && a[i].has_value(); };
    std::vector<int64_t> v;
    if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Cast") {
      if (!ok(0)) return std::nullopt;
      v = *a[0];
    } else if (op == "Concat") {
      if (out_dims->size() != 1) return std::nullopt;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!ok(i)) return std::nullopt;
        v.insert(v.end(), a[i]->begin(), a[i]->end());
      }
    } else if (op == "Gather") {
      const Known* data = find(n.input(0));
      if (!ok(0) || !ok(1) || !data || shape_of(data)->dim_size() != 1) return std::nullopt;
      const int64_t len = int64_t(a[0]->size());
      for (int64_t idx : *a[1]) {
        if (idx < -len || idx >= len) return std::nullopt;
        v.push_back((*a[0])[size_t(idx < 0 ? idx + len : idx)]);
      }
    } else if (op == "Slice" && n.input_size() >= 3) {
      const Known* data = find(n.input(0));
      if (!ok(0) || !ok(1) || !ok(2) || shape_of(data)->dim_size() != 1 || a[1]->size() != 1 || a[2]->size() != 1)
        return std::nullopt;
      const int64_t len = int64_t(a[0]->size());
      const int64_t step = ok(4) ? (*a[4])[0] : 1;
      if (step == 0) return std::nullopt;
      int64_t b = (*a[1])[0], e = (*a[2])[0];
      b = b < 0 ? b + len : b;
      e = e < 0 ? e + len : e;
      if (step > 0) {
        b = std::clamp<int64_t>(b, 0, len);
        e = std::clamp<int64_t>(e, 0, len);
        for (int64_t i = b; i < e; i += step) v.push_back((*a[0])[size_t(i)]);
      } else {
        b = std::clamp<int64_t>(b, -1, len - 1);
        e = std::clamp<int64_t>(e, -1, len - 1);
        for (int64_t i = b; i > e; i += step) v.push_back((*a[0])[size_t(i)]);
      }
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      if (!ok(0) || !ok(1)) return std::nullopt;
      const auto &x = *a[0], &y = *a[1];
      for (int64_t i = 0; i < count; ++i) {
        if ((x.size() != 1 && int64_t(x.size()) != count) || (y.size() != 1 && int64_t(y.size()) != count))
          return std::nullopt;
        const int64_t p = x[x.size() == 1 ? 0 : size_t(i)], q = y[y.size() == 1 ? 0 : size_t(i)];
        if (op == "Div" && q == 0) return std::nullopt;
        v.push_back(op == "Add" ? p + q : op == "Sub" ? p - q : op == "Mul" ? p * q : p / q);
      }
    } else {
      return std::nullopt;
    }
    if (int64_t(v.size()) != count) return std::nullopt;
    return make_ints(elem, *out_dims, v);
  }

  // ONNX's data propagation, then ORT's own for scalars (graph.cc, SaveShapeValuesFromDataPropagation).
  void propagate(const NodeProto& n, const onnx::OpSchema& schema, const std::vector<const Known*>& in,
                 const std::vector<TypeProto>& out) {
    PropagateContext pc(n, in, out);
    if (schema.has_data_propagation_function()) schema.GetDataPropagationFunction()(pc);
    const std::optional<TensorShapeProto>& onnx_values = pc.output(0);
    const int onnx_rank = onnx_values ? onnx_values->dim_size() : 0;
    Known& k = values_[n.output(0)];
    const std::string& op = n.op_type();
    auto all_known = [](const TensorShapeProto& s) {
      for (const auto& d : s.dim()) if (!d.has_dim_value()) return false;
      return true;
    };
    auto axes = [&]() -> std::optional<std::vector<int64_t>> {
      if (n.input_size() > 1) return ints_of(n.input(1));
      const AttributeProto* a = find_attr(n, "axes");
      return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
    };
    const Known* x = in.empty() ? nullptr : in[0];
    const TensorShapeProto* xv = x && x->shape_values ? &*x->shape_values : nullptr;

    if (op == "Size") {
      // ORT multiplies the elements of its input's propagated value.
      if (xv && xv->dim_size() > 0 && all_known(*xv)) {
        int64_t p = 1;
        for (const auto& d : xv->dim()) p *= d.dim_value();
        k.scalar_value = p;
      }
    } else if (op == "Squeeze") {
      if (!xv || !all_known(*xv)) return;
      if (xv->dim_size() == 1) {
        k.scalar_value = xv->dim(0).dim_value();
      } else if (xv->dim_size() > 1) {
        auto ax = axes();
        if (!ax) return;
        std::set<int64_t> drop;
        for (int64_t a : *ax) drop.insert(a < 0 ? a + xv->dim_size() : a);
        TensorShapeProto s;
        for (int i = 0; i < xv->dim_size(); ++i) {
          const int64_t d = xv->dim(i).dim_value();
          if (drop.empty() ? d != 1 : !drop.count(i)) s.add_dim()->set_dim_value(d);
        }
        k.shape_values = s;
      }
    } else if (op == "Unsqueeze") {
      if (onnx_rank == 0 && x && x->scalar_value) {
        TensorShapeProto s;
        s.add_dim()->set_dim_value(*x->scalar_value);
        k.shape_values = s;
      } else if (xv && xv->dim_size() > 0 && all_known(*xv)) {
        auto ax = axes();
        if (!ax || ax->empty()) return;
        std::set<int64_t> at;
        for (int64_t a : *ax) at.insert(a < 0 ? a + xv->dim_size() : a);
        TensorShapeProto s;
        for (int i = 0; i < xv->dim_size(); ++i) {
          if (at.count(i)) s.add_dim()->set_dim_value(1);
          s.add_dim()->set_dim_value(xv->dim(i).dim_value());
        }
        k.shape_values = s;
      }
    } else if (onnx_rank == 0 && op == "Gather") {
      auto idx = n.input_size() > 1 ? ints_of(n.input(1)) : std::nullopt;
      if (!xv || !idx || idx->size() != 1) return;
      int64_t i = (*idx)[0];
      if (i < -xv->dim_size() || i >= xv->dim_size()) return;
      const auto& d = xv->dim(int(i < 0 ? i + xv->dim_size() : i));
      if (d.has_dim_value()) k.scalar_value = d.dim_value();
    } else if (onnx_rank == 0 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")) {
      const Known* y = in.size() > 1 ? in[1] : nullptr;
      if (!x || !y || !x->scalar_value || !y->scalar_value) return;
      const int64_t p = *x->scalar_value, q = *y->scalar_value;
      if (op == "Div" && q == 0) return;
      k.scalar_value = op == "Add" ? p + q : op == "Sub" ? p - q : op == "Mul" ? p * q : p / q;
    } else if (onnx_rank > 0 && all_known(*onnx_values)) {
      k.shape_values = *onnx_values;
    }
  }

  const std::vector<NodeProto>& nodes_;
  std::map<std::string, int64_t> opsets_;
  std::map<std::string, Known> values_;
  std::map<std::string, const TypeProto*> declared_;
  std::deque<TensorProto> owned_;
};

struct Graph {
  const onnx::ModelProto& model;
  std::vector<NodeProto> nodes;
  std::map<std::string, TensorProto> fused;  // Reshape targets the fusion made constant

  const NodeProto* producer(const std::string& name) const {
    for (const auto& n : nodes)
      for (const auto& o : n.output()) if (o == name) return &n;
    return nullptr;
  }
  int consumers(const std::string& name) const {
    int c = 0;
    for (const auto& n : nodes)
      for (const auto& i : n.input()) c += i == name;
    for (const auto& o : model.graph().output()) c += o.name() == name;
    return c;
  }
};

bool is_op(const NodeProto* n, const char* op) { return n && n->op_type() == op && is_onnx_domain(n->domain()); }

// Unsqueeze with axes [0].
bool unsqueezes_axis0(const NodeProto* u, const Resolver& r) {
  if (!is_op(u, "Unsqueeze")) return false;
  std::optional<std::vector<int64_t>> axes;
  if (u->input_size() > 1) {
    const Known* k = r.find(u->input(1));
    if (k && k->constant && k->data) axes = read_ints(*k->data);
  } else if (const AttributeProto* a = find_attr(*u, "axes")) {
    axes = std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  return axes && axes->size() == 1 && (*axes)[0] == 0;
}

bool one_element(const Known* k) {
  auto dims = concrete_dims(shape_of(k));
  if (!dims) return false;
  int64_t p = 1;
  for (int64_t d : *dims) p *= d;
  return p == 1;
}

// The Reshape fusion on one Reshape; true when it replaced the target with a constant.
bool fuse_reshape(Graph& g, const NodeProto& reshape, const Resolver& r) {
  if (reshape.input_size() < 2 || attr_i(reshape, "allowzero", 0) != 0) return false;
  const NodeProto* concat = g.producer(reshape.input(1));
  if (!is_op(concat, "Concat") || g.consumers(concat->output(0)) != 1) return false;
  const std::string& root = reshape.input(0);
  std::vector<int64_t> target;
  for (const auto& piece : concat->input()) {
    const Known* k = r.find(piece);
    if (k && k->constant && k->data) {
      if (auto v = read_ints(*k->data)) {
        target.insert(target.end(), v->begin(), v->end());
        continue;
      }
    }
    // Shape -> Gather(position) -> Unsqueeze of the reshaped tensor: that dimension, kept (0).
    const NodeProto* unsq = g.producer(piece);
    const NodeProto* gather = unsqueezes_axis0(unsq, r) ? g.producer(unsq->input(0)) : nullptr;
    const NodeProto* shape = is_op(gather, "Gather") && gather->input_size() > 1 ? g.producer(gather->input(0)) : nullptr;
    if (is_op(shape, "Shape") && attr_i(*shape, "start", 0) == 0 && !find_attr(*shape, "end")) {
      const Known* idx = r.find(gather->input(1));
      auto iv = idx && idx->constant && idx->data ? read_ints(*idx->data) : std::nullopt;
      // ORT 1.30 also takes a dimension of another tensor that is the same as the reshaped
      // tensor's at that position: the same extent or the same symbol.
      const int64_t at = int64_t(target.size());
      bool same_dim = shape->input(0) == root;
      const TensorShapeProto *a = shape_of(r.find(shape->input(0))), *b = shape_of(r.find(root));
      if (!same_dim && a && b && at < a->dim_size() && at < b->dim_size()) {
        const auto &da = a->dim(int(at)), &db = b->dim(int(at));
        same_dim = (da.has_dim_value() && db.has_dim_value() && da.dim_value() == db.dim_value()) ||
                   (da.has_dim_param() && db.has_dim_param() && da.dim_param() == db.dim_param());
      }
      if (iv && iv->size() == 1 && (*iv)[0] == at && same_dim) {
        target.push_back(0);
        continue;
      }
    }
    // Any one-element piece becomes -1.
    bool one = one_element(k);
    if (!one && unsqueezes_axis0(unsq, r)) {
      const NodeProto* src = g.producer(unsq->input(0));
      one = one_element(r.find(unsq->input(0)));
      if (!one && (is_op(src, "Mul") || is_op(src, "Div")))
        one = one_element(r.find(src->input(0))) && one_element(r.find(src->input(1)));
      if (!one && is_op(src, "Gather")) one = one_element(r.find(src->input(1)));
    }
    if (!one) return false;
    target.push_back(-1);
  }
  if (std::count(target.begin(), target.end(), int64_t{-1}) > 1) return false;
  g.fused[concat->output(0)] = make_ints(TensorProto::INT64, {int64_t(target.size())}, target);
  return true;
}

}  // namespace

std::map<std::string, int64_t> input_channels_ort_knows(const onnx::ModelProto& model, const std::set<std::string>& ops) {
  Graph g{model, {model.graph().node().begin(), model.graph().node().end()}, {}};
  std::set<std::string> inputs;
  for (const auto& n : g.nodes)
    if (is_onnx_domain(n.domain()) && ops.count(n.op_type()) && n.input_size() > 0) inputs.insert(n.input(0));
  if (inputs.empty()) return {};

  std::map<std::string, int64_t> known;
  // Each round resolves the graph, then fuses the Reshapes it can; ORT repeats its rewrites
  // until none applies.
  for (int round = 0; round < 16; ++round) {
    Resolver r(model, g.nodes, g.fused);
    r.run();
    for (const auto& p : inputs) {
      const Known* k = r.find(p);
      const TensorShapeProto* s = shape_of(k);
      if (k && k->type.tensor_type().elem_type() == TensorProto::FLOAT && s && s->dim_size() == 4 &&
          s->dim(1).has_dim_value())
        known.emplace(p, s->dim(1).dim_value());
    }
    const size_t before = g.fused.size();
    for (const auto& n : g.nodes)
      if (is_op(&n, "Reshape")) fuse_reshape(g, n, r);
    if (g.fused.size() == before) break;
    // The fused Concats go; their outputs are constants now.
    std::erase_if(g.nodes, [&](const NodeProto& n) { return n.output_size() == 1 && g.fused.count(n.output(0)); });
  }
  return known;
}

}  // namespace octet::loader
