/* The test programs' random bits: xorshift64* over a state each program
 * seeds itself. */
#ifndef REDUX_TESTS_XORSHIFT_H
#define REDUX_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t xorshift64star(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

#endif
