/*
 * exec.h -- plan execution (CPU reference backend, CUDA backend).
 * Not implemented yet: see the executor issue.  CUDA headers are included
 * only under cuda_exec/.
 */
#ifndef FP_EXEC_H
#define FP_EXEC_H
#endif
