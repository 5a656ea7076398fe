// bench_fill.cu — device fill of the benchmark's dense buffers (B, C, S, R).
#include <stdint.h>

#include "bench.h"

namespace {

template <typename T>
__global__ void fill_kernel(T *p, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    const double v = 1.0 + (double)(h & 255) / 256.0;
    p[i] = (T)((h & 256) ? v : -v);
  }
}

}  // namespace

extern "C" cudaError_t bench_fill(void *p, size_t count, int is_double, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = (unsigned)((count + 255) / 256 < 65536 ? (count + 255) / 256 : 65536);
  if (is_double) fill_kernel<double><<<blocks, 256, 0, stream>>>(static_cast<double *>(p), count, seed);
  else fill_kernel<float><<<blocks, 256, 0, stream>>>(static_cast<float *>(p), count, seed);
  return cudaGetLastError();
}
