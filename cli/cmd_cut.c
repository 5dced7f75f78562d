/*
 * cmd_cut.c -- `fuseplan cut`: connected sub-graphs of consecutive nodes
 * cut out of a graph (solver/window/cut.h), written as graph files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "model/json.h"
#include "solver/window/cut.h"

static const char cut_help[] =
    "usage: fuseplan cut GRAPH --nodes A..B --count K [--seed S] -o DIR\n"
    "\n"
    "Cuts K connected sub-graphs of A to B consecutive nodes (in listed\n"
    "order) out of GRAPH; buffers that cross a cut's edges become its inputs\n"
    "and outputs.  Writes DIR/<name>@<first>+<count>.json.gz (<name>: the\n"
    "graph's name, each character but letters, digits and ._+@=- as _);\n"
    "the same graph, range, count and seed give the same cuts everywhere.\n"
    "\n"
    "  --nodes A..B     sizes of the cuts, in nodes\n"
    "  --count K        how many cuts (fewer when the graph has fewer)\n"
    "  --seed S         which ones (default 1)\n"
    "  -o, --output DIR where to write them (made if missing)\n"
    "  -q, --quiet      no summary on stderr\n" CLI_INPUT_OPTIONS_HELP;

/* Parses the options; 0 or a usage error. */
static int read_cut_options(const cli_args *a, int32_t *lo, int32_t *hi,
                            uint64_t *count, uint64_t *seed) {
  const char *nodes = cli_get(a, "nodes"), *k = cli_get(a, "count");
  const char *s = cli_get(a, "seed"), *dots = nodes ? strstr(nodes, "..") : 0;
  uint64_t x, y;
  char buf[32];
  if (a->n_pos != 1)
    return cli_usage_error("cut", "expected one GRAPH file");
  if (!cli_get(a, "output"))
    return cli_usage_error("cut", "expected -o DIR");
  if (!dots || (size_t)(dots - nodes) >= sizeof buf)
    return cli_usage_error("cut", "--nodes: expected A..B");
  memcpy(buf, nodes, (size_t)(dots - nodes));
  buf[dots - nodes] = '\0';
  if (cli_parse_uint(buf, INT32_MAX, &x) != 0 ||
      cli_parse_uint(dots + 2, INT32_MAX, &y) != 0 || x < 1 || x > y)
    return cli_usage_error("cut", "--nodes: expected A..B with 1 <= A <= B");
  *lo = (int32_t)x;
  *hi = (int32_t)y;
  if (!k || cli_parse_uint(k, FP_CUT_MAX, count) != 0)
    return cli_usage_error("cut", "--count: expected 0..%d", FP_CUT_MAX);
  *seed = 1;
  if (s && cli_parse_uint(s, UINT64_MAX, seed) != 0)
    return cli_usage_error("cut", "--seed: expected an integer >= 0");
  return 0;
}

/* Writes cut c of g into dir; 0 or an exit code. */
static int write_cut(const fp_graph *g, fp_cut c, const char *dir) {
  fp_graph *sg = NULL;
  fp_error err;
  char path[4200], name[CLI_FILE_NAME_MAX + 1];
  if (fp_graph_cut(g, c, &sg, &err) != FP_OK)
    return cli_fail(&err);
  /* The name comes from the file: made safe, and the range kept whole
   * however long the graph's name is. */
  cli_file_name(fp_graph_name(g), name, sizeof name - 24);
  snprintf(path, sizeof path, "%s/%s@%d+%d.json.gz", dir, name, (int)c.first,
           (int)c.count);
  fp_status st = fp_graph_save_file(sg, path, &err);
  fp_graph_destroy(sg);
  if (st != FP_OK)
    return fprintf(stderr, "fuseplan: %s\n", err.msg), EXIT_INTERNAL;
  return 0;
}

int cmd_cut(int argc, char **argv) {
  cli_opt opts[] = {{"nodes", 0, true, NULL},
                    {"count", 0, true, NULL},
                    {"seed", 0, true, NULL},
                    {"output", 'o', true, NULL},
                    {"quiet", 'q', false, NULL}};
  cli_args a = {
      .opts = opts, .n_opts = sizeof opts / sizeof *opts, .inputs = true};
  int32_t lo = 1, hi = 1, n = 0;
  uint64_t count = 0, seed = 1;
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("cut", "%s", a.error);
  if (a.help)
    return fputs(cut_help, stdout), EXIT_OK;
  int rc = read_cut_options(&a, &lo, &hi, &count, &seed);
  if (rc)
    return rc;
  fp_graph *g = NULL;
  fp_error err;
  const char *dir = cli_get(&a, "output");
  fp_cut *cuts = malloc(((size_t)count + 1) * sizeof *cuts);
  if (!cuts)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if ((rc = cli_load_graph(a.pos[0], &g)))
    goto done;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuseplan: %s: cannot make the directory\n", dir);
    rc = EXIT_INTERNAL;
    goto done;
  }
  if (fp_cut_choose(g, lo, hi, (int32_t)count, seed, cuts, &n, &err) != FP_OK) {
    rc = cli_fail(&err);
    goto done;
  }
  for (int32_t i = 0; i < n && !rc; i++)
    rc = write_cut(g, cuts[i], dir);
  char safe[CLI_SAFE_MAX];
  if (!rc && !cli_get(&a, "quiet"))
    fprintf(stderr, "%s: %d cuts of %d..%d nodes written to %s\n",
            cli_safe(fp_graph_name(g), safe, sizeof safe), (int)n, (int)lo,
            (int)hi, dir);
done:
  free(cuts);
  fp_graph_destroy(g);
  return rc;
}
