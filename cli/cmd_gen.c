/*
 * cmd_gen.c -- `fuseplan gen`: write a generated training-like graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "gen/generate.h"
#include "model/json.h"

static const char gen_help[] =
    "usage: fuseplan gen --family F --size N --seed S [-o GRAPH]\n"
    "\n"
    "Writes a deterministic, training-like graph (forward + backward with\n"
    "saved activations, float32 ops the executor can run) to GRAPH, or to\n"
    "stdout.  A name ending in .gz is gzip-compressed.\n"
    "  --family F   transformer | convnet | mlp | random (default\n"
    "               transformer)\n"
    "  --size N     target node count, 10 .. 10000000 (default 100)\n"
    "  --seed S     any unsigned 64-bit integer (default 1)\n"
    "  -o, --output GRAPH\n";

int cmd_gen(int argc, char **argv) {
  cli_opt opts[] = {{"family", 0, true, NULL},
                    {"size", 0, true, NULL},
                    {"seed", 0, true, NULL},
                    {"output", 'o', true, NULL}};
  cli_args a = {.opts = opts, .n_opts = 4};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("gen", "%s", a.error);
  if (a.help)
    return fputs(gen_help, stdout), EXIT_OK;
  if (a.n_pos != 0)
    return cli_usage_error("gen", "unexpected argument '%s'", a.pos[0]);
  fp_gen_params prm;
  fp_gen_params_init(&prm);
  const char *fam = cli_get(&a, "family"), *sz = cli_get(&a, "size"),
             *sd = cli_get(&a, "seed");
  uint64_t v;
  if (fam) {
    int f = fp_gen_family_parse(fam);
    if (f < 0)
      return cli_usage_error("gen", "unknown family '%s'", fam);
    prm.family = (fp_gen_family)f;
  }
  if (sz) {
    if (cli_parse_uint(sz, FP_GEN_MAX_SIZE, &v) != 0 || v < FP_GEN_MIN_SIZE)
      return cli_usage_error("gen", "--size: expected %d .. %d, got '%s'",
                             FP_GEN_MIN_SIZE, FP_GEN_MAX_SIZE, sz);
    prm.size = (int32_t)v;
  }
  if (sd) {
    if (cli_parse_uint(sd, UINT64_MAX, &v) != 0)
      return cli_usage_error("gen", "--seed: expected an unsigned integer");
    prm.seed = v;
  }
  fp_graph *g = NULL;
  fp_error err;
  fp_error_clear(&err);
  if (fp_generate(&prm, &g, &err) != FP_OK)
    return cli_fail(&err);
  const char *out = cli_get(&a, "output");
  int rc = 0;
  if (fp_graph_save_file(g, out ? out : "-", &err) != FP_OK) {
    fprintf(stderr, "fuseplan: %s\n", err.msg);
    rc = EXIT_INTERNAL;
  }
  fp_graph_destroy(g);
  return rc;
}
