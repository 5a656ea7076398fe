// cuda_kernels.cu — dst[rows] (+)= M · src on the GPU, deterministic (see cuda_kernels.h).
#include <stdint.h>
#include <string.h>

#include "cuda_kernels.h"

namespace {

constexpr int kBlock = 256;  // threads per block; kBlock / G rows per block

// W values of type T moved as one vector.
template <typename T, int W>
struct alignas(sizeof(T) * W) Pack { T v[W]; };
template <typename T, int W>
struct VecType;
template <>
struct VecType<float, 4> { typedef float4 type; };
template <>
struct VecType<float, 2> { typedef float2 type; };
template <>
struct VecType<float, 1> { typedef float type; };
template <>
struct VecType<double, 2> { typedef double2 type; };
template <>
struct VecType<double, 1> { typedef double type; };

// Read-only (non-coherent) vector load: src never aliases dst within a launch.
template <typename T, int W>
__device__ __forceinline__ Pack<T, W> load_ro(const T *p) {
  typedef typename VecType<T, W>::type V;
  V x = __ldg(reinterpret_cast<const V *>(p));
  Pack<T, W> r;
  memcpy(&r, &x, sizeof r);
  return r;
}
template <typename T, int W>
__device__ __forceinline__ Pack<T, W> load_rw(const T *p) {
  typedef typename VecType<T, W>::type V;
  V x = *reinterpret_cast<const V *>(p);
  Pack<T, W> r;
  memcpy(&r, &x, sizeof r);
  return r;
}
template <typename T, int W>
__device__ __forceinline__ void store(T *p, const Pack<T, W> &r) {
  typedef typename VecType<T, W>::type V;
  V x;
  memcpy(&x, &r, sizeof x);
  *reinterpret_cast<V *>(p) = x;
}

// Rounded one operation at a time (never contracted into an FMA): the CPU kernel's bits.
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

struct Args {
  void *dst;
  const void *src;
  const int32_t *ptr, *col, *rows;
  const void *val;
  int64_t nrows, n;
  int accum;
};

// One group of G threads per destination row; lane c handles vectors c, c+G, ...
// Entries are visited in stored order and summed in registers: deterministic.
template <typename T, int W, int G, bool HAS_VAL>
__global__ void __launch_bounds__(kBlock) mul_rows(const Args a) {
  const int64_t row = (int64_t)blockIdx.x * (kBlock / G) + threadIdx.x / G;
  const int lane = (int)(threadIdx.x & (G - 1));
  if (row >= a.nrows) return;
  const int64_t e0 = a.ptr ? a.ptr[row] : row, e1 = a.ptr ? a.ptr[row + 1] : row + 1;
  const int64_t d_row = a.rows ? a.rows[row] : row;
  const int64_t n = a.n, nvec = n / W;
  T *__restrict__ d = static_cast<T *>(a.dst) + d_row * n;
  const T *__restrict__ s = static_cast<const T *>(a.src);
  const T *__restrict__ val = static_cast<const T *>(a.val);
  const int32_t *__restrict__ col = a.col;
  for (int64_t c = lane; c < nvec; c += G) {
    Pack<T, W> acc;
    int64_t e = e0;
    if (a.accum) {
      acc = load_rw<T, W>(d + c * W);
    } else if (e < e1) {  // the first term is assigned, as on the CPU (-0 stays -0)
      acc = load_ro<T, W>(s + (int64_t)col[e] * n + c * W);
      if (HAS_VAL) {
        const T v = val[e];
#pragma unroll
        for (int k = 0; k < W; k++) acc.v[k] = mul_rn(v, acc.v[k]);
      }
      e++;
    } else {
#pragma unroll
      for (int k = 0; k < W; k++) acc.v[k] = T(0);
    }
#pragma unroll 4
    for (; e < e1; e++) {
      const Pack<T, W> x = load_ro<T, W>(s + (int64_t)col[e] * n + c * W);
      if (HAS_VAL) {
        const T v = val[e];
#pragma unroll
        for (int k = 0; k < W; k++) acc.v[k] = add_rn(acc.v[k], mul_rn(v, x.v[k]));
      } else {
#pragma unroll
        for (int k = 0; k < W; k++) acc.v[k] = add_rn(acc.v[k], x.v[k]);
      }
    }
    store<T, W>(d + c * W, acc);
  }
}

template <typename T, int W, int G>
cudaError_t launch3(const Args &a, bool has_val, cudaStream_t stream) {
  const int64_t per_block = kBlock / G;
  const int64_t blocks = (a.nrows + per_block - 1) / per_block;
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  if (has_val) mul_rows<T, W, G, true><<<(unsigned)blocks, kBlock, 0, stream>>>(a);
  else mul_rows<T, W, G, false><<<(unsigned)blocks, kBlock, 0, stream>>>(a);
  return cudaGetLastError();
}

template <typename T, int W>
cudaError_t launch2(const Args &a, int group, bool has_val, cudaStream_t stream) {
  switch (group) {
    case 1: return launch3<T, W, 1>(a, has_val, stream);
    case 2: return launch3<T, W, 2>(a, has_val, stream);
    case 4: return launch3<T, W, 4>(a, has_val, stream);
    case 8: return launch3<T, W, 8>(a, has_val, stream);
    case 16: return launch3<T, W, 16>(a, has_val, stream);
    default: return launch3<T, W, 32>(a, has_val, stream);
  }
}

}  // namespace

extern "C" void cuda_mul_shape(const cuda_mul *m, int *vec_bytes, int *group) {
  const uint64_t esz = m->is_double ? 8 : 4;
  const uint64_t row_bytes = (uint64_t)m->n * esz;
  const uint64_t bits = row_bytes | (uint64_t)(uintptr_t)m->dst | (uint64_t)(uintptr_t)m->src;
  int vb = (bits % 16 == 0) ? 16 : (bits % 8 == 0) ? 8
                                                   : 4;
  if (vb < (int)esz) vb = (int)esz;
  const int64_t nvec = (int64_t)(row_bytes / (uint64_t)vb);
  int g = 1;
  while (g < 32 && g < nvec) g *= 2;
  *vec_bytes = vb;
  *group = g;
}

extern "C" cudaError_t cuda_mul_launch(const cuda_mul *m, cudaStream_t stream) {
  if (m->nrows <= 0) return cudaSuccess;
  if (m->n <= 0) return cudaErrorInvalidValue;
  Args a;
  a.dst = m->dst;
  a.src = m->src;
  a.ptr = m->ptr;
  a.col = m->col;
  a.rows = m->rows;
  a.val = m->val;
  a.nrows = m->nrows;
  a.n = m->n;
  a.accum = m->accum;
  int vb = 0, g = 0;
  cuda_mul_shape(m, &vb, &g);
  const bool has_val = m->val != NULL;
  if (m->is_double) {
    if (vb == 16) return launch2<double, 2>(a, g, has_val, stream);
    return launch2<double, 1>(a, g, has_val, stream);
  }
  if (vb == 16) return launch2<float, 4>(a, g, has_val, stream);
  if (vb == 8) return launch2<float, 2>(a, g, has_val, stream);
  return launch2<float, 1>(a, g, has_val, stream);
}
