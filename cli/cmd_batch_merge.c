/*
 * cmd_batch_merge.c -- `fuseplan batch merge DIR... -o OUT`: one dataset
 * from the directories of several shards (`fuseplan batch --shard K/N`,
 * one per task of a job array), equal to what a single run would have
 * written.  OUT is locked while it is merged into.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "cli/args.h"
#include "cli/cli.h"

static const char merge_help[] =
    "usage: fuseplan batch merge DIR... -o OUT\n"
    "\n"
    "Copies the items of batch directories (shards of one batch, run with\n"
    "--shard K/N) into OUT, each file atomically, and assembles OUT's\n"
    "dataset files as a single run would.  An id whose item records differ\n"
    "between two directories, other than in time_s, is refused before\n"
    "anything is written (exit 3); copies equal but for it are fine.  An\n"
    "item whose files are not valid is left out, with a warning.\n"
    "\n"
    "  -o, --output OUT the merged dataset directory (made if missing)\n"
    "  -q, --quiet      no summary on stderr\n";

/* A warning of the merge (an item left out), on one line. */
static void merge_warning(const char *msg, void *ctx) {
  char safe[CLI_SAFE_MAX];
  (void)ctx;
  fprintf(stderr, "fuseplan batch merge: warning: %s\n",
          cli_safe(msg, safe, sizeof safe));
}

int cmd_batch_merge(int argc, char **argv) {
  cli_opt opts[] = {{"output", 'o', true, NULL}, {"quiet", 'q', false, NULL}};
  cli_args a = {.opts = opts, .n_opts = sizeof opts / sizeof *opts};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("batch merge", "%s", a.error);
  if (a.help)
    return fputs(merge_help, stdout), EXIT_OK;
  const char *out = cli_get(&a, "output");
  if (!out)
    return cli_usage_error("batch merge", "expected -o OUT");
  if (a.n_pos < 1)
    return cli_usage_error("batch merge", "expected at least one DIR");
  fp_error err;
  int fd;
  fp_error_clear(&err);
  if (fp_batch_lock(out, &fd, &err) != FP_OK) {
    fprintf(stderr, "fuseplan batch merge: %s\n", err.msg);
    return EXIT_INPUT;
  }
  fp_status st = fp_batch_merge((const char *const *)a.pos, a.n_pos, out,
                                merge_warning, NULL, &err);
  fp_batch_unlock(fd);
  if (st != FP_OK)
    return cli_fail(&err);
  if (!cli_get(&a, "quiet")) {
    char **ids = NULL;
    int32_t n = 0;
    if (fp_batch_list_ids(out, &ids, &n, &err) == FP_OK)
      fprintf(stderr,
              "fuseplan batch merge: %d items from %d directories "
              "in %s\n",
              (int)n, a.n_pos, out);
    for (int32_t i = 0; i < n; i++)
      free(ids[i]);
    free(ids);
  }
  return EXIT_OK;
}
