// A hand-written float loop, the user's own code next to libtorch. CMakeLists.txt compiles this
// file twice: as fpx_loop_sum_plain with the build's flags (IEEE order, left to right), and as
// fpx_loop_sum_fastmath with -O3 -ffast-math, which lets the compiler reassociate the additions
// (vector lanes, then a horizontal sum).
#include <cstdint>

#ifndef FPX_LOOP_NAME
#define FPX_LOOP_NAME fpx_loop_sum_plain
#endif

extern "C" float FPX_LOOP_NAME(const float* x, std::int64_t n) {
  float acc = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) acc += x[i];
  return acc;
}
