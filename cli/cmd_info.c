/*
 * cmd_info.c -- `fuseplan info GRAPH [--json]`: what a graph holds, the
 * eager plan's costs, and the structural lower bounds.
 */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"

static const char info_help[] =
    "usage: fuseplan info GRAPH [--json]\n"
    "\n"
    "Prints node and buffer counts, total and resident bytes (the bytes\n"
    "live outside the graph among them, shown apart), the eager\n"
    "plan's traffic and peak (every node alone, listed order), and lower\n"
    "bounds on traffic and peak that hold for every legal plan.\n"
    "  --json   one JSON object on stdout instead of "
    "text\n" CLI_INPUT_OPTIONS_HELP;

typedef struct graph_stats {
  int32_t kinds[3];
  int32_t inputs, freeable, outputs, multi_read;
  uint64_t total_bytes;
} graph_stats;

static void collect(const fp_graph *g, graph_stats *s) {
  memset(s, 0, sizeof *s);
  for (int32_t v = 0; v < fp_graph_node_count(g); v++)
    s->kinds[fp_graph_node(g, v)->kind]++;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    s->inputs += buf->input;
    s->freeable += buf->freeable;
    s->outputs += buf->output;
    s->multi_read += buf->n_readers > 1;
    s->total_bytes += buf->bytes;
  }
}

static void print_json(const fp_graph *g, const graph_stats *s,
                       const fp_metrics *m, const fp_bounds *lb) {
  fputs("{\"name\": ", stdout);
  cli_json_str(stdout, fp_graph_name(g));
  printf(", \"nodes\": %d, \"pointwise\": %d, "
         "\"reduction\": %d, \"extern\": %d, \"buffers\": %d, \"inputs\": %d, "
         "\"freeable_inputs\": %d, \"outputs\": %d, \"multi_reader_buffers\": "
         "%d, \"unfusible_pairs\": %d, \"linked_pairs\": %d, "
         "\"max_fusion_size\": %d, "
         "\"total_bytes\": %llu, \"resident_bytes\": %llu, "
         "\"outside_live_bytes\": %llu, \"inplace_pairs\": %d, "
         "\"workspace_bytes\": %llu, \"largest_workspace_bytes\": %llu, "
         "\"eager\": {\"traffic_bytes\": %llu, \"peak_bytes\": %llu, "
         "\"kernels\": %d}, \"lower_bound\": {\"traffic_bytes\": %llu, "
         "\"peak_bytes\": %llu}}\n",
         (int)fp_graph_node_count(g), (int)s->kinds[0], (int)s->kinds[1],
         (int)s->kinds[2], (int)fp_graph_buffer_count(g), (int)s->inputs,
         (int)s->freeable, (int)s->outputs, (int)s->multi_read,
         (int)fp_graph_unfusible_count(g), (int)fp_graph_linked_count(g),
         (int)fp_graph_max_fusion_size(g), (unsigned long long)s->total_bytes,
         (unsigned long long)fp_graph_resident_bytes(g),
         (unsigned long long)fp_graph_outside_live_bytes(g),
         (int)fp_graph_inplace_count(g),
         (unsigned long long)fp_graph_workspace_total(g),
         (unsigned long long)fp_graph_workspace_max(g, NULL),
         (unsigned long long)m->traffic_bytes,
         (unsigned long long)m->peak_bytes, (int)m->kernels,
         (unsigned long long)lb->traffic_bytes,
         (unsigned long long)lb->peak_bytes);
}

/* The nodes' workspaces (docs/cost-model.md#workspaces), only when some
 * node has one: their total, and the largest with its node. */
static void print_workspaces(const fp_graph *g) {
  char b1[64], b2[64], safe[CLI_SAFE_MAX];
  int32_t at;
  uint64_t max = fp_graph_workspace_max(g, &at);
  if (at < 0)
    return;
  printf("workspaces       %s  (largest %s, node '%s'; live during the "
         "node's kernel)\n",
         cli_bytes(fp_graph_workspace_total(g), b1, sizeof b1),
         cli_bytes(max, b2, sizeof b2),
         cli_safe(fp_graph_node(g, at)->name, safe, sizeof safe));
}

static void print_text(const fp_graph *g, const graph_stats *s,
                       const fp_metrics *m, const fp_bounds *lb) {
  char b1[64], safe[CLI_SAFE_MAX];
  printf("graph            %s\n",
         cli_safe(fp_graph_name(g), safe, sizeof safe));
  if (fp_graph_source(g)[0])
    printf("source           %s\n",
           cli_safe(fp_graph_source(g), safe, sizeof safe));
  printf("nodes            %d (%d pointwise, %d reduction, %d extern)\n",
         (int)fp_graph_node_count(g), (int)s->kinds[0], (int)s->kinds[1],
         (int)s->kinds[2]);
  printf("buffers          %d (%d inputs, %d freeable, %d outputs, %d read "
         "by 2+ nodes)\n",
         (int)fp_graph_buffer_count(g), (int)s->inputs, (int)s->freeable,
         (int)s->outputs, (int)s->multi_read);
  printf("max_fusion_size  %d; unfusible pairs %d",
         (int)fp_graph_max_fusion_size(g), (int)fp_graph_unfusible_count(g));
  if (fp_graph_linked_count(g) > 0) /* graph format 3's linked pairs */
    printf("; linked pairs %d", (int)fp_graph_linked_count(g));
  putchar('\n');
  printf("total bytes      %s\n", cli_bytes(s->total_bytes, b1, sizeof b1));
  uint64_t outside = fp_graph_outside_live_bytes(g);
  printf("resident inputs  %s\n",
         cli_bytes(fp_graph_resident_bytes(g) - outside, b1, sizeof b1));
  /* Every step's live memory counts these too (docs/cost-model.md). */
  printf("outside live     %s  (held when the graph is entered, not read)\n",
         cli_bytes(outside, b1, sizeof b1));
  /* Pairs an output may take over an input's storage in (cost-model.md). */
  printf("in-place pairs   %d\n", (int)fp_graph_inplace_count(g));
  print_workspaces(g);
  printf("eager traffic    %s\n", cli_bytes(m->traffic_bytes, b1, sizeof b1));
  printf("eager peak       %s\n", cli_bytes(m->peak_bytes, b1, sizeof b1));
  printf("traffic bound    %s  (no legal plan moves less)\n",
         cli_bytes(lb->traffic_bytes, b1, sizeof b1));
  printf("peak bound       %s  (no legal plan needs less)\n",
         cli_bytes(lb->peak_bytes, b1, sizeof b1));
}

int cmd_info(int argc, char **argv) {
  cli_opt opts[] = {{"json", 0, false, NULL}};
  cli_args a = {.opts = opts, .n_opts = 1, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("info", "%s", a.error);
  if (a.help) {
    fputs(info_help, stdout);
    return EXIT_OK;
  }
  if (a.n_pos != 1)
    return cli_usage_error("info", "expected one GRAPH file");
  fp_graph *g = NULL;
  fp_plan *p = NULL;
  fp_error err;
  fp_metrics m;
  fp_bounds lb;
  graph_stats s;
  int rc = cli_load_graph(a.pos[0], &g);
  if (rc)
    return rc;
  fp_error_clear(&err);
  if (!(p = fp_plan_create())) {
    rc = cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
    goto done;
  }
  if (fp_plan_make_eager(p, g, &err) != FP_OK ||
      fp_plan_eval(g, p, &m, NULL, &err) != FP_OK ||
      fp_graph_bounds(g, &lb, &err) != FP_OK) {
    rc = cli_fail(&err);
    goto done;
  }
  collect(g, &s);
  if (cli_get(&a, "json"))
    print_json(g, &s, &m, &lb);
  else
    print_text(g, &s, &m, &lb);
done:
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}
