/*
 * cpu.h -- the CPU reference backend (cpu.c) as the driver (driver.c) calls
 * it.  What the backends share lies below them, in schedule.h.
 */
#ifndef FP_EXEC_CPU_H
#define FP_EXEC_CPU_H

#include <stdbool.h>

#include "cuda_exec/exec.h"
#include "cuda_exec/schedule.h"

/* Runs the schedule on the CPU.  keep_outputs: copy the graph's outputs
 * into r->outputs.  FP_ENOMEM. */
fp_status fx_cpu_run(const fx_sched *s, const fp_exec_params *prm,
                     bool keep_outputs, fx_result *r, fp_error *err);

#endif /* FP_EXEC_CPU_H */
