#include "apps/serve/batcher.h"

#include <exception>

namespace octet::serve {

struct Batcher::Item {
  const std::vector<ir::TensorData>* inputs;
  int64_t rows;
  std::vector<ir::TensorData> outputs;
  std::exception_ptr error;
};

struct Batcher::Group {
  std::vector<Item*> items;
  int64_t rows = 0;
  bool closed = false;  // takes no more requests
  bool done = false;    // every item has its outputs or its error
  std::condition_variable changed;
};

namespace {

// The rows of a request, when every input has the same extent on axis 0; -1 otherwise.
int64_t batch_rows(const std::vector<ir::TensorData>& inputs) {
  if (inputs.empty() || inputs[0].dims.empty()) return -1;
  const int64_t rows = inputs[0].dims[0];
  for (const ir::TensorData& t : inputs)
    if (t.dims.empty() || t.dims[0] != rows) return -1;
  return rows;
}

// What requests must share to run together: each input's element type and extents past axis 0.
std::string shape_key(const std::vector<ir::TensorData>& inputs) {
  std::string key;
  for (const ir::TensorData& t : inputs) {
    key += std::to_string(int(t.dtype));
    for (size_t d = 1; d < t.dims.size(); ++d) key += "," + std::to_string(t.dims[d]);
    key += ";";
  }
  return key;
}

}  // namespace

std::vector<ir::TensorData> Batcher::run_alone(const std::vector<ir::TensorData>& inputs) {
  ++runs_;
  return run_(inputs);
}

std::vector<ir::TensorData> Batcher::run(std::vector<ir::TensorData> inputs) {
  ++requests_;
  const int64_t rows = batch_rows(inputs);
  if (options_.max_batch <= 1 || rows < 1 || rows >= options_.max_batch) return run_alone(inputs);

  Item item{&inputs, rows, {}, nullptr};
  const std::string key = shape_key(inputs);
  std::unique_lock<std::mutex> lock(mutex_);
  std::shared_ptr<Group> group;
  const auto open = open_.find(key);
  if (open != open_.end() && open->second->rows + rows <= options_.max_batch) {
    group = open->second;
    group->items.push_back(&item);
    group->rows += rows;
    if (group->rows >= options_.max_batch) {
      group->closed = true;
      open_.erase(open);
      group->changed.notify_all();
    }
    group->changed.wait(lock, [&] { return group->done; });
  } else {
    if (open != open_.end()) {  // too full to take this one: it leaves now, this one leads the next
      open->second->closed = true;
      open->second->changed.notify_all();
      open_.erase(open);
    }
    group = std::make_shared<Group>();
    group->items.push_back(&item);
    group->rows = rows;
    open_[key] = group;
    group->changed.wait_for(lock, options_.max_delay, [&] {
      return group->closed || (!options_.wait_for_delay && running_ < options_.max_running);
    });
    if (!group->closed) {
      group->closed = true;
      open_.erase(key);
    }
    ++running_;
    lock.unlock();
    execute(*group);
    lock.lock();
    --running_;
    group->done = true;
    group->changed.notify_all();
    for (auto& [k, gathering] : open_) gathering->changed.notify_all();  // a core is free
  }
  lock.unlock();
  if (item.error) std::rethrow_exception(item.error);
  return std::move(item.outputs);
}

void Batcher::execute(Group& g) {
  auto each_alone = [&] {
    for (Item* it : g.items) {
      try {
        it->outputs = run_alone(*it->inputs);
      } catch (...) {
        it->error = std::current_exception();
      }
    }
  };
  if (g.items.size() == 1) return each_alone();

  // Row-major with the batch outermost: concatenating along axis 0 is appending the bytes.
  const std::vector<ir::TensorData>& first = *g.items[0]->inputs;
  std::vector<ir::TensorData> joined(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    joined[i].dtype = first[i].dtype;
    joined[i].dims = first[i].dims;
    joined[i].dims[0] = g.rows;
    size_t bytes = 0;
    for (const Item* it : g.items) bytes += (*it->inputs)[i].bytes.size();
    joined[i].bytes.reserve(bytes);
    for (const Item* it : g.items)
      joined[i].bytes.insert(joined[i].bytes.end(), (*it->inputs)[i].bytes.begin(), (*it->inputs)[i].bytes.end());
  }
  std::vector<ir::TensorData> out;
  try {
    out = run_alone(joined);
  } catch (...) {
    return each_alone();  // each request gets its own answer (or its own error)
  }
  for (const ir::TensorData& t : out)
    if (t.dims.empty() || t.dims[0] != g.rows) return each_alone();  // an output without the batch on axis 0

  for (Item* it : g.items) it->outputs.resize(out.size());
  for (size_t o = 0; o < out.size(); ++o) {
    const size_t row_bytes = out[o].bytes.size() / size_t(g.rows);
    size_t offset = 0;
    for (Item* it : g.items) {
      ir::TensorData& t = it->outputs[o];
      t.dtype = out[o].dtype;
      t.dims = out[o].dims;
      t.dims[0] = it->rows;
      const size_t n = row_bytes * size_t(it->rows);
      t.bytes.assign(out[o].bytes.begin() + std::ptrdiff_t(offset), out[o].bytes.begin() + std::ptrdiff_t(offset + n));
      offset += n;
    }
  }
}

}  // namespace octet::serve
