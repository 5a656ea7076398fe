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

/* The 16-bit conversions: runtime/half.h's integer steps, on the device. */
__device__ static float dev_bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }
__device__ static uint16_t dev_f32_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
__device__ static float dev_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, m = h & 0x3ffu;
  uint32_t e = (h >> 10) & 0x1fu;
  if (e == 0x1f) return __uint_as_float(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  if (e) return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
  if (!m) return __uint_as_float(sign);
  uint32_t mm = m;
  e = 113;
  while (!(mm & 0x400u)) {
    mm <<= 1;
    e--;
  }
  return __uint_as_float(sign | (e << 23) | ((mm & 0x3ffu) << 13));
}
__device__ static uint16_t dev_f32_to_f16(float f) {
  const uint32_t x = __float_as_uint(f), ax = x & 0x7fffffffu;
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    if (ax <= 0x33000000u) return sign;
    const uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    uint32_t q = m >> shift;
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = ax - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

__global__ static void half_widen_kernel(int bf, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t ld) {
  const int64_t all = rows * n;
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < all; k += (int64_t)gridDim.x * blockDim.x) {
    const uint16_t h = src[(k / n) * ld + k % n];
    dst[k] = bf ? dev_bf16_to_f32(h) : dev_f16_to_f32(h);
  }
}

__global__ static void half_round_kernel(int bf, uint16_t *dst, int64_t ld, const float *src, int64_t rows, int64_t n) {
  const int64_t all = rows * n;
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < all; k += (int64_t)gridDim.x * blockDim.x)
    dst[(k / n) * ld + k % n] = bf ? dev_f32_to_bf16(src[k]) : dev_f32_to_f16(src[k]);
}

static unsigned half_blocks(int64_t all) {
  const int64_t b = (all + 255) / 256;
  return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

extern "C" cudaError_t cuda_half_widen(int bf, float *dst, const uint16_t *src, int64_t rows, int64_t n, int64_t ld,
                                       cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  half_widen_kernel<<<half_blocks(rows * n), 256, 0, stream>>>(bf, dst, src, rows, n, ld);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_half_round(int bf, uint16_t *dst, int64_t ld, const float *src, int64_t rows, int64_t n,
                                       cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  half_round_kernel<<<half_blocks(rows * n), 256, 0, stream>>>(bf, dst, ld, src, rows, n);
  return cudaGetLastError();
}
