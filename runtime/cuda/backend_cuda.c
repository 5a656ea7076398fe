/* backend_cuda.c — placeholder until the CUDA backend lands: refuses clearly. */
#include "error.h"
#include "internal.h"

static shiro_status cuda_setup(shiro_ctx *c, shiro_error *err) {
  (void)c;
  return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "shiro_ctx_create: the CUDA backend is not implemented yet");
}

static shiro_status cuda_spmm(shiro_ctx *c, const void *B, void *C) {
  (void)B; (void)C; (void)c;
  return SHIRO_ERR_UNSUPPORTED;
}

static void cuda_destroy(shiro_ctx *c) { (void)c; }

const backend_ops cuda_backend = {"cuda", cuda_setup, cuda_spmm, cuda_destroy};
