/*
 * solver.h -- the GLPK integer program and the large-graph driver.
 * Not implemented yet: see the solver issues.  glpk.h is included only
 * under solver/.
 */
#ifndef FP_SOLVER_H
#define FP_SOLVER_H
#endif
