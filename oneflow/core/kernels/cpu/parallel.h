// Parallel loops that stay off OpenMP when they would run on one thread.
//
// Note [One-thread parallel regions]: libgomp (GCC 12) makes a futex system call at the end of
// every parallel region, also of one that runs on a single thread (an `if (false)` clause, a team
// of one): ~0.35-0.5 us on the 2-vCPU EPYC, more than the whole kernel of a small op (a sum of 256
// floats is ~30 ns). OF_OMP_FOR_IF(cond, clauses, loop) runs `loop` (a for statement) as
// `#pragma omp parallel for clauses` when cond holds and the team has more than one thread, and
// as a plain loop otherwise. The loop must not contain preprocessor directives.
// OF_OMP_PARALLEL_IF(cond, clauses, region) does the same for a parallel block: region(), a
// callable whose work sharing is orphaned `omp for` loops (each thread's share inside a region,
// all of the work outside one), runs inside `#pragma omp parallel clauses` or on this thread.
#pragma once

#include <omp.h>

#define OF_OMP_PRAGMA(x) _Pragma(#x)
#define OF_OMP_FOR_IF(cond, clauses, ...)                 \
  do {                                                    \
    if ((cond) && omp_get_max_threads() > 1) {            \
      OF_OMP_PRAGMA(omp parallel for clauses) __VA_ARGS__ \
    } else {                                              \
      __VA_ARGS__                                         \
    }                                                     \
  } while (0)
#define OF_OMP_PARALLEL_IF(cond, clauses, region)   \
  do {                                              \
    if ((cond) && omp_get_max_threads() > 1) {      \
      OF_OMP_PRAGMA(omp parallel clauses) region(); \
    } else {                                        \
      region();                                     \
    }                                               \
  } while (0)
