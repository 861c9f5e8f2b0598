/* The float32 partial's loops give the same bits: built twice by
 * tests/test_reliability.py, as the extension is (the AVX2+FMA loop where
 * the CPU has it) and with -DREDUX_CPU_NO_CLONES (the baseline loop only),
 * and the two outputs compared line by line. Inputs: random mantissas at
 * mixed exponents with an offset (sums that round, never exact), lengths
 * around the 32-lane edges, unaligned starts; full partials and rows. The
 * first line names the loop that ran (redux_cpu_float32_loop; the test
 * skips when both builds ran the baseline), the second the input size from
 * which it prefetches far (redux_cpu_far_prefetch_bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redux/redux.h"
#include "xorshift.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t next_bits(void) { return xorshift64star(&rng_state); }

/* A float of random sign and mantissa at 2^-20 .. 2^20, plus an offset:
 * adding these rounds at nearly every step. */
static float sample(float offset) {
  const uint64_t b = next_bits();
  const float m = (float)((b >> 40) & 0xffffff) / 16777216.0f + 0.5f;
  const int e = (int)((b >> 8) % 41) - 20;
  float v = m;
  for (int k = 0; k < (e < 0 ? -e : e); ++k) v = e < 0 ? v * 0.5f : v * 2.0f;
  return ((b & 1) ? -v : v) + offset;
}

int main(void) {
  printf("loop %s\n", redux_cpu_float32_loop());
  printf("far prefetch from %lld bytes\n", (long long)redux_cpu_far_prefetch_bytes());
  const int64_t lengths[] = {1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 1000, 1023, 1024, 1025, 4096 + 17,
                             REDUX_CPU_CHUNK - 1, REDUX_CPU_CHUNK, REDUX_CPU_CHUNK + 31};
  const float offsets[] = {0.0f, 0.3f, -1000.0f};
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; ++li)
    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; ++oi)
      for (int start = 0; start < 4; ++start) {
        const int64_t n = lengths[li];
        float *buf = malloc((size_t)(n + start) * sizeof(float));
        for (int64_t i = 0; i < n + start; ++i) buf[i] = sample(offsets[oi]);
        redux_cpu_acc acc;
        float rows[3];
        const int64_t row_n = n / 3;
        if (redux_cpu_sum_partial(buf + start, n, REDUX_F32, REDUX_F32, &acc) != REDUX_OK ||
            redux_cpu_sum_rows(buf + start, rows, 0, 3, row_n, REDUX_F32, REDUX_F32) != REDUX_OK) {
          fprintf(stderr, "status error\n");
          return 2;
        }
        uint64_t db;
        uint32_t rb[3];
        memcpy(&db, &acc.hi, sizeof db);
        memcpy(rb, rows, sizeof rb);
        printf("n=%lld offset=%g start=%d partial=%016llx rows=%08x,%08x,%08x\n", (long long)n, offsets[oi], start,
               (unsigned long long)db, rb[0], rb[1], rb[2]);
        free(buf);
      }
  return 0;
}
