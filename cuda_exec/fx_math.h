/*
 * fx_math.h -- the executor's exp, tanh and erf, written once and compiled
 * twice: as static C functions for the CPU backend and, through the
 * string FX_MATH_CUDA_SRC, as __device__ functions inside every generated
 * CUDA kernel.  They use only IEEE-exact operations (+ - * /, floorf,
 * ldexpf, comparisons; no contraction: ISO C11 and NVRTC --fmad=false),
 * so the CPU and the GPU compute them bit for bit alike, unlike the two
 * math libraries' expf/tanhf/erff, which differ by an ulp or so.  The
 * formulas define the executor's semantics (docs/executor.md): exp by
 * range reduction to |r| <= ln2/2 and a degree-6 Taylor polynomial
 * (relative error about 2e-7), tanh from exp, erf by Abramowitz-Stegun
 * 7.1.26 (absolute error 1.5e-7).  No '#' may appear in the body: it is
 * turned into a string by the preprocessor.
 */
#ifndef FP_FX_MATH_H
#define FP_FX_MATH_H

#include <math.h>

#define FX_MATH(Q)                                                             \
  Q float fx_exp(float x) {                                                    \
    if (x != x)                                                                \
      return x;                                                                \
    if (x > 88.5f) {                                                           \
      float h = 3.0e38f;                                                       \
      return h * h;                                                            \
    }                                                                          \
    if (x < -87.0f)                                                            \
      return 0.0f;                                                             \
    float k = floorf(x * 1.44269504f + 0.5f);                                  \
    float r = x - k * 0.693145752f;                                            \
    r = r - k * 1.42860677e-06f;                                               \
    float p = 0.00138888892f;                                                  \
    p = 0.00833333377f + r * p;                                                \
    p = 0.0416666679f + r * p;                                                 \
    p = 0.166666672f + r * p;                                                  \
    p = 0.5f + r * p;                                                          \
    p = 1.0f + r * p;                                                          \
    p = 1.0f + r * p;                                                          \
    return ldexpf(p, (int)k);                                                  \
  }                                                                            \
  Q float fx_tanh(float x) {                                                   \
    if (x > 9.0f)                                                              \
      return 1.0f;                                                             \
    if (x < -9.0f)                                                             \
      return -1.0f;                                                            \
    float e = fx_exp(2.0f * x);                                                \
    return (e - 1.0f) / (e + 1.0f);                                            \
  }                                                                            \
  Q float fx_erf(float x) {                                                    \
    float s = x < 0.0f ? -1.0f : 1.0f;                                         \
    float a = x < 0.0f ? -x : x;                                               \
    float t = 1.0f / (1.0f + 0.3275911f * a);                                  \
    float y = 1.061405429f * t - 1.453152027f;                                 \
    y = y * t + 1.421413741f;                                                  \
    y = y * t - 0.284496736f;                                                  \
    y = y * t + 0.254829592f;                                                  \
    y = 1.0f - y * t * fx_exp(-a * a);                                         \
    return s * y;                                                              \
  }

#define FX_STR_(...) #__VA_ARGS__
#define FX_STR(...) FX_STR_(__VA_ARGS__)
/* The same functions as CUDA source. */
#define FX_MATH_CUDA_SRC FX_STR(FX_MATH(__device__ static)) "\n"

#endif /* FP_FX_MATH_H */
