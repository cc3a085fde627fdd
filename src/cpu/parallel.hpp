// lowbit: split an index range over std::thread workers (the CPU backend's only threading).
//
// parallel_for(begin, end, threads, fn) calls fn(chunk_begin, chunk_end) on contiguous,
// disjoint chunks that cover [begin, end) in order, one chunk per worker; the calling thread
// runs the first chunk itself. The chunking depends only on (begin, end, threads), so a
// computation whose elements are independent gives the same bits for any thread count.
// The first exception thrown by a chunk is rethrown after every worker has joined.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace lowbit::detail {

// threads <= 0 means one per hardware thread (at least 1).
inline int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// min_chunk: the fewest indices worth a thread of their own (avoids spawning threads for
// tiny ranges); the number of workers is min(resolve_threads(threads), ceil(n / min_chunk)).
template <typename Fn>
void parallel_for(int64_t begin, int64_t end, int threads, Fn&& fn, int64_t min_chunk = 1) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  const int64_t workers =
      std::min<int64_t>(resolve_threads(threads), (n + min_chunk - 1) / min_chunk);
  if (workers <= 1) {
    fn(begin, end);
    return;
  }
  // Chunk i covers [begin + i*n/workers, begin + (i+1)*n/workers): sizes differ by at most 1.
  auto chunk_start = [&](int64_t i) { return begin + (n / workers) * i + std::min(i, n % workers); };
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](int64_t i) {
    try {
      fn(chunk_start(i), chunk_start(i + 1));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int64_t i = 1; i < workers; ++i) {
    try {
      pool.emplace_back(run, i);
    } catch (const std::system_error&) {
      run(i);  // no thread available: do the chunk here (chunks are independent)
    }
  }
  run(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace lowbit::detail
