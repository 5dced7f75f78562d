/*
 * generate.h -- deterministic generator of NN-shaped training graphs.
 *
 * `fuseplan gen` and the tests and benchmarks draw their graphs from here.
 * The same parameters always give the same graph, byte for byte, on every
 * platform (own PRNG, no floating point in structural decisions).
 */
#ifndef FP_GENERATE_H
#define FP_GENERATE_H

#include <stdint.h>

#include "model/graph.h"
#include "model/status.h"

#define FP_GEN_FAMILY_MAP(X)                                                   \
  X(TRANSFORMER, "transformer")                                                \
  X(CONVNET, "convnet")                                                        \
  X(MLP, "mlp")                                                                \
  X(RANDOM, "random")

typedef enum fp_gen_family {
#define FP_GEN_FAMILY_ENUM_(name, str) FP_GEN_##name,
  FP_GEN_FAMILY_MAP(FP_GEN_FAMILY_ENUM_)
#undef FP_GEN_FAMILY_ENUM_
      FP_GEN_FAMILY_COUNT_
} fp_gen_family;

#define FP_GEN_DEFAULT_SIZE 100
#define FP_GEN_MIN_SIZE 10
#define FP_GEN_MAX_SIZE 10000000

typedef struct fp_gen_params {
  fp_gen_family family; /* default FP_GEN_TRANSFORMER */
  int32_t size;         /* target node count, FP_GEN_MIN_SIZE..MAX_SIZE */
  uint64_t seed;        /* default 1 */
} fp_gen_params;

/* Fills `p` with the defaults above. */
void fp_gen_params_init(fp_gen_params *p);

/* Generates a finalized graph of exactly p->size nodes: one training step
 * (forward, loss, backward) of a transformer / convnet / mlp, or a random
 * NN-like DAG.  Fails with FP_EARG on bad parameters (NULL p or out,
 * unknown family, size outside FP_GEN_MIN_SIZE..FP_GEN_MAX_SIZE), or
 * FP_ENOMEM; *out is NULL on failure. */
fp_status fp_generate(const fp_gen_params *p, fp_graph **out, fp_error *err);

/* Family names ("transformer") and their parser (-1 if unknown). */
const char *fp_gen_family_name(fp_gen_family f);
int fp_gen_family_parse(const char *s);

#endif /* FP_GENERATE_H */
