/* csr.c — lifetime of the compiler's CSR matrix. */
#include <stdlib.h>

#include "csr.h"

void sc_csr_free(sc_csr *A) {
  if (!A) return;
  free(A->Ap);
  free(A->Aj);
  free(A->Ax);
  free(A);
}
