/*
 * test_exec_emul.c -- the generated CUDA kernels, run without a GPU.
 *
 * The CUDA C that cuda_gen.c writes is also valid C++ once a few CUDA
 * names are defined (__global__, blockIdx, atomicAdd, __int_as_float).
 * This test compiles a plan's kernels with the host C++ compiler into a
 * shared object, launches each group's phases in plan order as the CUDA
 * backend does (one thread: the grid-stride loops cover every item), and
 * requires the graph's outputs to equal the CPU backend's bit for bit.
 * That checks the generator's indexing, phases, registers, scratch slots
 * and surrogates on machines without a GPU.  Exits 77 (SKIP) when no C++
 * compiler is found.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_exec/cpu.h"
#include "cuda_exec/cuda_gen.h"
#include "tests/cuda_exec/exec_util.h"

/* CUDA names for a host C++ compiler: one block of one thread. */
static const char shim[] =
    "#include <math.h>\n#include <string.h>\n"
    "#define __global__\n#define __device__\n#define __forceinline__ inline\n"
    "#define __restrict__\n"
    "struct fx_dim { unsigned x, y, z; };\n"
    "static const fx_dim blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0},\n"
    "  blockDim = {1, 1, 1}, gridDim = {1, 1, 1};\n"
    "static inline float __int_as_float(unsigned x) {\n"
    "  float f; memcpy(&f, &x, 4); return f; }\n"
    "static inline unsigned atomicAdd(unsigned *p, unsigned v) {\n"
    "  unsigned o = *p; *p += v; return o; }\n";

static const char *cxx(void) {
  const char *c = getenv("CXX");
  return c && *c ? c : "c++";
}

/* Writes shim, prelude, kernels and one wrapper per kernel taking its
 * arguments as an array (call_fp_gN(phase, args)). */
static void write_source(const char *path, const fx_kernel *k, int32_t n) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(shim, f);
  fputs(fx_cuda_prelude(), f);
  for (int32_t t = 0; t < n; t++) {
    fputs(k[t].src, f);
    fprintf(
        f,
        "extern \"C\" void call_%s(int phase, unsigned char **a) {\n  %s(phase",
        k[t].name, k[t].name);
    for (int32_t i = 0; i < k[t].n_args; i++)
      fprintf(f, ", a[%d]", (int)i);
    fputs(");\n}\n", f);
  }
  ck_assert_int_eq(fclose(f), 0);
}

typedef void (*kernel_fn)(int, unsigned char **);

/* Runs the compiled kernels over the schedule; returns the outputs. */
static unsigned char **emulate_run(const fx_sched *s, const fx_kernel *k,
                                   void *so) {
  const fp_graph *g = s->g;
  unsigned char **mem = calloc((size_t)s->buffers + 1, sizeof *mem);
  ck_assert_ptr_nonnull(mem);
  for (int32_t b = 0; b < s->buffers; b++) {
    uint64_t bytes = fp_graph_buffer(g, b)->bytes;
    if (s->where[b] != FX_MEM)
      continue;
    mem[b] = calloc((size_t)(bytes + 3) / 4 * 4 + 4, 1);
    ck_assert_ptr_nonnull(mem[b]);
    if (s->alloc_at[b] < 0)
      fx_fill_input(mem[b], bytes, FP_EXEC_DEFAULT_SEED, b);
  }
  for (int32_t t = 0; t < s->steps; t++) {
    char name[48];
    snprintf(name, sizeof name, "call_%s", k[t].name);
    kernel_fn fn;
    *(void **)&fn = dlsym(so, name);
    ck_assert_ptr_nonnull(*(void **)&fn);
    unsigned char **args = calloc((size_t)k[t].n_args + 1, sizeof *args);
    ck_assert_ptr_nonnull(args);
    for (int32_t a = 0; a < k[t].n_args; a++) {
      int32_t b = k[t].arg_buf[a];
      args[a] =
          b >= 0
              ? mem[b]
              : calloc((size_t)(k[t].scratch_bytes[-1 - b] + 3) / 4 * 4 + 4, 1);
      ck_assert_ptr_nonnull(args[a]);
    }
    for (int32_t l = 0; l < k[t].n_launch; l++)
      fn(k[t].launch[l].phase, args);
    for (int32_t a = 0; a < k[t].n_args; a++)
      if (k[t].arg_buf[a] < 0)
        free(args[a]);
    free(args);
  }
  return mem;
}

/* Compiles p's kernels, runs them, and compares with the CPU backend. */
static void emulate(const fp_graph *g, const fp_plan *p, const char *what) {
  fx_sched s;
  fp_error err;
  ck_assert_int_eq(fx_sched_build(g, p, &s, &err), FP_OK);
  fx_kernel *k = calloc((size_t)s.steps + 1, sizeof *k);
  ck_assert_ptr_nonnull(k);
  for (int32_t t = 0; t < s.steps; t++)
    ck_assert_int_eq(fx_gen_kernel(&s, t, &k[t], &err), FP_OK);
  char dir[256], src[300], so_path[300], cmd[1024];
  snprintf(dir, sizeof dir, "%s/fp-emul-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(src, sizeof src, "%s/k.cpp", dir);
  snprintf(so_path, sizeof so_path, "%s/k.so", dir);
  write_source(src, k, s.steps);
  snprintf(cmd, sizeof cmd,
           "%s -O1 -ffp-contract=off -w -shared -fPIC -o %s %s", cxx(), so_path,
           src);
  ck_assert_msg(system(cmd) == 0, "%s: the kernels do not compile as C++",
                what);
  void *so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(so != NULL, "%s: dlopen: %s", what, dlerror());
  unsigned char **mem = emulate_run(&s, k, so);
  fp_exec_params prm;
  fx_result ref;
  fp_exec_params_init(&prm);
  ck_assert_int_eq(fx_cpu_run(&s, &prm, true, &ref, &err), FP_OK);
  for (int32_t i = 0; i < fp_graph_output_count(g); i++) {
    int32_t b = fp_graph_output(g, i);
    ck_assert_msg(memcmp(mem[b], ref.outputs[i],
                         (size_t)fp_graph_buffer(g, b)->bytes) == 0,
                  "%s: output '%s' differs from the CPU backend's", what,
                  fp_graph_buffer(g, b)->name);
  }
  fx_result_free(&ref, fp_graph_output_count(g));
  dlclose(so);
  for (int32_t b = 0; b < s.buffers; b++)
    free(mem[b]);
  free(mem);
  for (int32_t t = 0; t < s.steps; t++)
    fx_kernel_free(&k[t]);
  free(k);
  unlink(src);
  unlink(so_path);
  rmdir(dir);
  fx_sched_free(&s);
}

/* _i: family.  Eager, greedy, greedy-lowmem and a random plan, with ops
 * and as surrogates. */
START_TEST(plans_emulated) {
  uint64_t seed = 21;
  fp_graph *g = eu_small_graph((fp_gen_family)_i, 30, &seed, (uint64_t)96 << 20,
                               (uint64_t)256 << 20);
  fp_graph *bare = eu_strip_ops(g);
  tu_rng rng = {seed};
  char what[96];
  for (int i = 0; i < EU_PLAN_SET; i++) {
    const fp_graph *gg;
    fp_plan *p = eu_plan_in_set(g, bare, &rng, i, &gg);
    snprintf(what, sizeof what, "%s plan %d",
             fp_gen_family_name((fp_gen_family)_i), i);
    emulate(gg, p, what);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(bare);
  fp_graph_destroy(g);
}
END_TEST

/* Odd surrogates (partial reads, tails, multi-writes) in random fusions. */
START_TEST(random_surrogates_emulated) {
  tu_rng rng = {5};
  for (int i = 0; i < 6; i++) {
    fp_graph *g = tu_random_graph(&rng, 4, 12);
    fp_plan *p = eu_random_plan(g, &rng);
    emulate(g, p, "random surrogate graph");
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

int main(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cxx());
  if (system(cmd) != 0) {
    printf("SKIP: no C++ compiler (%s)\n", cxx());
    return 77;
  }
  Suite *s = suite_create("exec_emul");
  TCase *tc = tcase_create("emul");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, plans_emulated, 0, FP_GEN_FAMILY_COUNT_);
  tcase_add_test(tc, random_surrogates_emulated);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
