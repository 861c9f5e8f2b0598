/* csrc/cpu/convert.h against a reference built from rint and ldexp: every
 * float16 and bfloat16 code to float; floats (every 61st bit pattern, and
 * each code's midpoints and their neighbours) and doubles (random, and
 * next to each midpoint, where rounding through a plain float would round
 * twice) to float16 and bfloat16, round to nearest even, NaN kept quiet.
 * Prints "N failures"; run by tests/test_reliability.py. */
#include <math.h>
#include <stdio.h>

#include "convert.h"
#include "xorshift.h"

typedef struct { int man_bits, emin, emax; } format; /* emax is the exponent's bias too */
static const format F16 = {10, -14, 15}, BF16 = {7, -126, 127};

/* The code's value: finite codes decoded by ldexp; inf and NaN as floats. */
static double value_of(format f, uint16_t c) {
  const int e = (c >> f.man_bits) & ((1 << (15 - f.man_bits)) - 1), top = (1 << (15 - f.man_bits)) - 1;
  const uint32_t man = c & ((1u << f.man_bits) - 1);
  const double s = (c & 0x8000u) ? -1.0 : 1.0;
  if (e == top) return man ? NAN : s * INFINITY;
  return e == 0 ? s * ldexp((double)man, f.emin - f.man_bits) : s * ldexp((double)(man | (1u << f.man_bits)), e - f.emax - f.man_bits);
}

/* d rounded once to the format, nearest even: the significand scaled to an
 * integer by a power of two (exact), rint, scaled back; past the largest
 * finite value inf. NaN: a quiet NaN of d's sign. */
static uint16_t reference_code(format f, double d) {
  const uint16_t sign = signbit(d) ? 0x8000u : 0;
  const uint16_t inf = (uint16_t)(((1u << (15 - f.man_bits)) - 1) << f.man_bits);
  if (d != d) return sign | inf | (uint16_t)(1u << (f.man_bits - 1));
  const double a = fabs(d);
  if (a == INFINITY) return sign | inf;
  int e;
  frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  int q = e - 1 < f.emin ? f.emin : e - 1;
  const double n = rint(ldexp(a, f.man_bits - q)); /* at most 2^(man_bits + 1) */
  const double r = ldexp(n, q - f.man_bits);
  if (r >= ldexp(2.0, f.emax)) return sign | inf;
  /* encode r, exact in the format */
  if (r < ldexp(1.0, f.emin)) return sign | (uint16_t)ldexp(r, f.man_bits - f.emin);
  frexp(r, &e);
  q = e - 1;
  const uint32_t man = (uint32_t)ldexp(r, f.man_bits - q) - (1u << f.man_bits);
  return sign | (uint16_t)(((uint32_t)(q + f.emax) << f.man_bits) | man);
}

static long failures = 0;
/* For NaN any quiet NaN of d's sign (bfloat16 keeps the payload's top bits). */
static void expect(format f, const char *what, double d, uint16_t got, uint16_t want) {
  const uint16_t quiet = (uint16_t)((((1u << (15 - f.man_bits)) - 1) << f.man_bits) | (1u << (f.man_bits - 1)));
  const int ok = d == d ? got == want : (got & quiet) == quiet && (got & 0x8000u) == (want & 0x8000u);
  if (!ok && failures++ < 10) printf("%s(%a): %04x, want %04x\n", what, d, got, want);
}

static void check_double(double d) {
  expect(F16, "double_to_f16", d, double_to_f16(d), reference_code(F16, d));
  expect(BF16, "double_to_bf16", d, double_to_bf16(d), reference_code(BF16, d));
}

static void check_float(float x) {
  expect(F16, "float_to_f16", x, float_to_f16(x), reference_code(F16, x));
  expect(BF16, "float_to_bf16", x, float_to_bf16(x), reference_code(BF16, x));
}

int main(void) {
  for (uint32_t c = 0; c < 65536; ++c) { /* every code to float: the same value (NaN: the payload kept, quiet) */
    const float h = f16_to_float((uint16_t)c), b = bf16_to_float((uint16_t)c);
    const double vh = value_of(F16, (uint16_t)c), vb = value_of(BF16, (uint16_t)c);
    if (vh == vh ? (double)h != vh || !signbit(h) != !signbit(vh) : float_to_bits(h) != (((c & 0x8000u) << 16) | 0x7f800000u | ((c & 0x3ffu) << 13)))
      if (failures++ < 10) printf("f16_to_float(%04x) = %a, want %a\n", c, h, vh);
    if (vb == vb ? (double)b != vb || !signbit(b) != !signbit(vb) : float_to_bits(b) != c << 16)
      if (failures++ < 10) printf("bf16_to_float(%04x) = %a, want %a\n", c, b, vb);
  }
  uint32_t u = 0;
  do check_float(bits_to_float(u)); while ((u += 61) >= 61); /* every 61st pattern, NaNs and infs among them */
  for (uint32_t c = 0; c < 0x7fffu; ++c) { /* each pair of neighbouring codes: their midpoint and next to it */
    const format fs[2] = {F16, BF16};
    for (int k = 0; k < 2; ++k) {
      const double lo = value_of(fs[k], (uint16_t)c), hi = value_of(fs[k], (uint16_t)(c + 1));
      if (lo != lo || hi != hi || isinf(hi)) continue;
      const double mid = (lo + hi) / 2; /* exact */
      const double near[5] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), nextafter((float)mid, 0), nextafter((float)mid, INFINITY)};
      for (int j = 0; j < 5; ++j) {
        check_double(near[j]), check_double(-near[j]);
        check_float((float)near[j]), check_float(-(float)near[j]);
      }
    }
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (long k = 0; k < 2000000; ++k) { /* random doubles: any bits, and over the formats' ranges */
    const uint64_t b = xorshift64star(&state);
    double d;
    memcpy(&d, &b, sizeof d);
    check_double(d);
    check_double(ldexp((double)(b >> 11) / 9007199254740992.0, (int)(b % 300) - 160));
  }
  const double edges[] = {0.0, -0.0, INFINITY, -INFINITY, 65504.0, 65520.0, 0x1.ffdfffffffffp15, 0x1.ffep15, 0x1p-24, 0x1p-25, 0x1.0000000000001p-25, 0x1p-26, 0x1.fep127, 0x1.ff8p127, 0x1p-133, 0x1p-134, 0x1p-150, 1e300, 1e-300};
  for (unsigned k = 0; k < sizeof edges / sizeof *edges; ++k) check_double(edges[k]), check_double(-edges[k]);
  printf("%ld failures\n", failures);
  return failures != 0;
}
