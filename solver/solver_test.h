/*
 * solver_test.h -- test hooks of solver/, for the unit tests only: not
 * part of the public API (solver.h) and never used by the library itself.
 */
#ifndef FP_SOLVER_TEST_H
#define FP_SOLVER_TEST_H

/* on != 0: from now on every MIP run on the calling thread (the ILP's and
 * the cluster bounds') fails inside GLPK, as a GLPK internal error would,
 * which exercises the error-hook recovery of mip.c; on == 0: GLPK runs
 * normally again.  Cannot fail. */
void solver_test_inject_fault(int on);

#endif /* FP_SOLVER_TEST_H */
