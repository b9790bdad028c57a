// The request batcher (apps/serve/batcher.h) over a fake run that records what it was given:
// concurrent requests of the same shapes gather up to max_batch rows or max_delay, each gets its
// own rows back in order, and requests of other shapes never share a run.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "apps/serve/batcher.h"

namespace octet::serve::batcher_tests {
namespace {

using Clock = std::chrono::steady_clock;

// A [rows, width] float input whose row r holds `tag + r` everywhere.
ir::TensorData rows_of(int64_t rows, int64_t width, float tag) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r) v.insert(v.end(), size_t(width), tag + float(r));
  return ir::TensorData::f32({rows, width}, v);
}

// Output 0: the input doubled; output 1: each row's first element (shape [rows]).
struct FakeModel {
  std::mutex mutex;
  std::vector<int64_t> batch_sizes;  // rows of each run
  std::vector<ir::TensorData> run(const std::vector<ir::TensorData>& in) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      batch_sizes.push_back(in[0].dims[0]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ir::TensorData a = in[0];
    for (float& v : std::span<float>(a.as<float>(), size_t(a.count()))) v *= 2;
    std::vector<float> firsts;
    for (int64_t r = 0; r < in[0].dims[0]; ++r) firsts.push_back(in[0].as<float>()[r * in[0].dims[1]]);
    return {a, ir::TensorData::f32({in[0].dims[0]}, firsts)};
  }
  Batcher::RunFn fn() {
    return [this](const std::vector<ir::TensorData>& in) { return run(in); };
  }
};

TEST(Batcher, GathersUpToMaxBatchAndSplitsResultsBackInOrder) {
  FakeModel model;
  Batcher b(model.fn(), {4, std::chrono::seconds(5), true});  // a long delay: only a full batch leaves early
  constexpr int kRequests = 8;
  std::vector<std::vector<ir::TensorData>> out(kRequests);
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (int i = 0; i < kRequests; ++i)
    threads.emplace_back([&, i] { out[size_t(i)] = b.run({rows_of(1, 3, float(100 * i))}); });
  for (auto& t : threads) t.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(4)) << "full batches must not wait for the delay";
  EXPECT_EQ(model.batch_sizes, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(b.runs(), 2u);
  EXPECT_EQ(b.requests(), 8u);
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(out[size_t(i)].size(), 2u);
    EXPECT_EQ(out[size_t(i)][0].dims, (ir::Dims{1, 3}));
    EXPECT_EQ(out[size_t(i)][0].as<float>()[2], 200.0f * float(i)) << "request " << i << " got another's rows";
    EXPECT_EQ(out[size_t(i)][1].dims, (ir::Dims{1}));
    EXPECT_EQ(out[size_t(i)][1].as<float>()[0], 100.0f * float(i));
  }
}

TEST(Batcher, RequestsOfSeveralRowsKeepTheirRows) {
  FakeModel model;
  Batcher b(model.fn(), {8, std::chrono::milliseconds(200), true});
  std::vector<ir::TensorData> x, y;
  std::thread t1([&] { x = b.run({rows_of(2, 5, 10)}); });
  std::thread t2([&] { y = b.run({rows_of(3, 5, 20)}); });
  t1.join();
  t2.join();
  EXPECT_EQ(model.batch_sizes, (std::vector<int64_t>{5}));
  EXPECT_EQ(x[0].dims, (ir::Dims{2, 5}));
  EXPECT_EQ(y[0].dims, (ir::Dims{3, 5}));
  EXPECT_EQ(x[1].as<float>()[1], 11.0f);
  EXPECT_EQ(y[1].as<float>()[2], 22.0f);
}

TEST(Batcher, ALoneRequestToldToWaitForTheDelayLeavesAfterIt) {
  FakeModel model;
  Batcher b(model.fn(), {8, std::chrono::milliseconds(50), true});
  const auto t0 = Clock::now();
  const auto out = b.run({rows_of(1, 2, 7)});
  const auto waited = Clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_LT(waited, std::chrono::seconds(2));
  EXPECT_EQ(out[1].as<float>()[0], 7.0f);
}

TEST(Batcher, ALoneRequestRunsAtOnceByDefault) {
  FakeModel model;
  Batcher b(model.fn(), {8, std::chrono::seconds(5)});
  const auto t0 = Clock::now();
  b.run({rows_of(1, 2, 7)});
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(model.batch_sizes, (std::vector<int64_t>{1}));
}

// A run whose first call holds the model until release(): the batch it starts "runs" for as long
// as a test needs, so that others can be made to arrive while it does.
struct HeldFirstRun {
  std::mutex mutex;
  std::condition_variable released;
  bool let_go = false;
  std::vector<int64_t> sizes;  // rows of each run
  Batcher::RunFn fn() {
    return [this](const std::vector<ir::TensorData>& in) -> std::vector<ir::TensorData> {
      std::unique_lock<std::mutex> lock(mutex);
      sizes.push_back(in[0].dims[0]);
      if (sizes.size() == 1) released.wait(lock, [&] { return let_go; });
      return {in[0]};
    };
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      let_go = true;
    }
    released.notify_all();
  }
};

TEST(Batcher, RequestsArrivingWhileOneRunsGatherByDefault) {
  // The first request runs alone and holds the model (max_running 1) until released; the next
  // three arrive while it runs, so they wait for company and leave as one batch when the third
  // fills it.
  HeldFirstRun model;
  Batcher b(model.fn(), {3, std::chrono::seconds(5)});
  std::thread first([&] { b.run({rows_of(1, 2, 0)}); });
  while (b.runs() == 0) std::this_thread::yield();
  const auto t0 = Clock::now();
  std::vector<std::thread> later;
  for (int i = 1; i <= 3; ++i) later.emplace_back([&, i] { b.run({rows_of(1, 2, float(i))}); });
  for (auto& t : later) t.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(4)) << "a full batch must not wait for the delay";
  model.release();
  first.join();
  EXPECT_EQ(model.sizes, (std::vector<int64_t>{1, 3}));
}

TEST(Batcher, AGatheringBatchLeavesWhenACoreFrees) {
  // max_batch 8 and a long delay, but two requests wait behind a running one: when it ends,
  // they leave at once as a batch of two rather than waiting for six more.
  HeldFirstRun model;
  Batcher b(model.fn(), {8, std::chrono::seconds(20)});
  std::thread first([&] { b.run({rows_of(1, 2, 0)}); });
  while (b.runs() == 0) std::this_thread::yield();
  std::vector<std::thread> later;
  for (int i = 1; i <= 2; ++i) later.emplace_back([&, i] { b.run({rows_of(1, 2, float(i))}); });
  while (b.requests() < 3) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both are gathering by now
  const auto t0 = Clock::now();
  model.release();
  first.join();
  for (auto& t : later) t.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "the batch waited for the delay with a core free";
  EXPECT_EQ(model.sizes, (std::vector<int64_t>{1, 2}));
}

TEST(Batcher, DifferentShapesAreNotMixed) {
  FakeModel model;
  Batcher b(model.fn(), {8, std::chrono::milliseconds(100), true});
  std::vector<std::thread> threads;
  std::vector<std::vector<ir::TensorData>> out(6);
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&, i] { out[size_t(i)] = b.run({rows_of(1, i % 2 ? 3 : 4, float(i))}); });
  for (auto& t : threads) t.join();
  std::vector<int64_t> sizes = model.batch_sizes;
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[size_t(i)][0].dims[1], i % 2 ? 3 : 4);
}

TEST(Batcher, MaxBatchOneRunsEachRequestAtOnce) {
  FakeModel model;
  Batcher b(model.fn(), {1, std::chrono::seconds(10)});
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { b.run({rows_of(1, 2, float(i))}); });
  for (auto& t : threads) t.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(model.batch_sizes, (std::vector<int64_t>(4, 1)));
}

TEST(Batcher, AFailedBatchAnswersEachRequestAlone) {
  // The run refuses any batch holding the row tagged 666: only that request fails.
  std::atomic<int> runs{0};
  Batcher b(
      [&](const std::vector<ir::TensorData>& in) -> std::vector<ir::TensorData> {
        ++runs;
        for (float v : in[0].values<float>())
          if (v == 666) throw ir::Error("bad row");
        return {in[0]};
      },
      {4, std::chrono::milliseconds(200), true});
  std::vector<int> ok(4, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      try {
        b.run({rows_of(1, 2, i == 2 ? 666 : float(i))});
        ok[size_t(i)] = 1;
      } catch (const ir::Error&) {
        ok[size_t(i)] = 0;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, (std::vector<int>{1, 1, 0, 1}));
}

}  // namespace
}  // namespace octet::serve::batcher_tests
