#include "cpu/parallel.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/device.h"

namespace dt::cpu {
namespace {

int32_t initial_threads() {
  if (const char* env = std::getenv("DEVTENSOR_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 1024) return static_cast<int32_t>(v);
  }
  return host_core_count();
}

std::atomic<int32_t> g_threads{0};

// Workers sleep on a condition variable; a job is a range function and a chunk counter
// they pull from until the range is exhausted.
class Pool {
 public:
  void run(int64_t n, int64_t grain, int32_t threads, const std::function<void(int64_t, int64_t)>& f) {
    std::lock_guard<std::mutex> job_lock(job_mu_);  // one parallel job at a time
    ensure_workers(threads - 1);
    int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &f;
      n_ = n;
      chunks_ = chunks;
      next_chunk_.store(0);
      pending_ = chunks;
      error_ = nullptr;
      active_workers_ = static_cast<int32_t>(chunks - 1);
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void ensure_workers(int32_t count) {
    while (static_cast<int32_t>(workers_.size()) < count) {
      int32_t id = static_cast<int32_t>(workers_.size());
      workers_.emplace_back([this, id] { loop(id); });
      workers_.back().detach();
    }
  }

  void loop(int32_t id) {
    uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (id >= active_workers_) continue;
      }
      work();
    }
  }

  void work() {
    while (true) {
      int64_t c = next_chunk_.fetch_add(1);
      if (c >= chunks_) return;
      int64_t begin = n_ * c / chunks_, end = n_ * (c + 1) / chunks_;
      try {
        (*fn_)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }

  std::mutex job_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, pending_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  int32_t active_workers_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool* p = new Pool();  // workers are detached; never destroyed
  return *p;
}

}  // namespace

int32_t num_threads() {
  int32_t n = g_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    n = initial_threads();
    g_threads.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_num_threads(int32_t n) { g_threads.store(n, std::memory_order_relaxed); }

void parallel_for_impl(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  pool().run(n, grain, num_threads(), f);
}

}  // namespace dt::cpu
