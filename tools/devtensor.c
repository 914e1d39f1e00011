/*
 * devtensor — the command-line tool.
 *
 *   devtensor info [--by-free-memory] [--json]   every device, as a table or as JSON
 *   devtensor version                            library version and build configuration
 *   devtensor run [options] -- program [args]    start N ranks of a program, like torchrun
 *   devtensor --help                             usage
 *
 * C99; uses only the public C API (include/devtensor.h). Exit status: 0 success,
 * 1 a devtensor call failed (the status and the library's message are printed),
 * 2 a usage error. `run` is the launcher in launcher.c (POSIX; no devtensor call): its
 * exit status is 0 when every rank exited 0, 1 when one failed, 2 a usage error and
 * 128+N when the launcher received signal N.
 */
#include <devtensor.h>

#include "launcher.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

static const char* g_prog = "devtensor";

static void usage(FILE* f) {
  fprintf(f,
          "usage: %s <command> [options]\n"
          "\n"
          "commands:\n"
          "  info [--by-free-memory] [--json]\n"
          "        list every device: type and index, name, free and total memory; for\n"
          "        CUDA devices also compute capability, multiprocessor count, UUID, PCI\n"
          "        bus id, physical index and the effect of CUDA_VISIBLE_DEVICES.\n"
          "        --by-free-memory  order GPUs by free memory (most first), CPUs after\n"
          "        --json            print machine-readable JSON instead of a table\n"
          "  version\n"
          "        print the library version and the build configuration\n"
          "  run [--nproc-per-node N] [--nnodes M] [--node-rank K] [--master-addr A]\n"
          "      [--master-port P] [--kill-grace SECONDS] [--no-prefix] -- program [args...]\n"
          "        start N processes of program (ranks K*N .. K*N+N-1 of M*N), like torchrun,\n"
          "        with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,\n"
          "        MASTER_ADDR and MASTER_PORT set (torch.distributed's env://). Output lines\n"
          "        are prefixed \"[rank R] \"; SIGINT, SIGTERM and SIGHUP are forwarded; when\n"
          "        a rank fails the others get SIGTERM (SIGKILL after --kill-grace, default\n"
          "        5 s) and the exit status is 1. Defaults: N=1, M=1, K=0, A=127.0.0.1, P a\n"
          "        free local port (29500 when M>1). `devtensor run --help` for more.\n"
          "  help, --help, -h\n"
          "        print this help\n"
          "\n"
          "environment:\n"
          "  DEVTENSOR_CPU_DEVICES=N   expose N logical CPU devices (cpu:0 .. cpu:N-1)\n"
          "  DEVTENSOR_NUM_THREADS=N   CPU threads used by large operations\n"
          "  DEVTENSOR_CUDA_PLUGIN=P   path of libdevtensor-cuda.so\n"
          "  CUDA_VISIBLE_DEVICES      which GPUs are visible, and in which order\n",
          g_prog);
}

/* Prints "devtensor: <what>: <status name>: <detail>" and returns 1 (the exit status). */
static int fail(const char* what, dt_status st) {
  const char* detail = dt_last_error_message();
  fprintf(stderr, "%s: %s: %s%s%s\n", g_prog, what, dt_status_string(st),
          (detail && *detail) ? ": " : "", (detail && *detail) ? detail : "");
  return 1;
}

/* ----------------------------------------------------------------- small helpers */

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "%s: out of memory\n", g_prog);
    exit(1);
  }
  return p;
}

static char* xstrdup(const char* s) {
  size_t n = strlen(s) + 1;
  char* p = (char*)xmalloc(n);
  memcpy(p, s, n);
  return p;
}

static void format_device(dt_device d, char* buf, size_t cap) {
  size_t needed = 0;
  if (dt_device_format(d, buf, cap, &needed) != DT_OK) {
    snprintf(buf, cap, "type%d:%d", (int)d.type, (int)d.index);
  }
}

/* "12.3 GiB" */
static void format_bytes(uint64_t bytes, char* buf, size_t cap) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) {
    snprintf(buf, cap, "%" PRIu64 " B", bytes);
  } else {
    snprintf(buf, cap, "%.1f %s", v, units[u]);
  }
}

/* dt_cuda_status, with an allocated reason. */
static dt_status cuda_status(int32_t* state, char** reason) {
  size_t needed = 0;
  dt_status st = dt_cuda_status(state, NULL, 0, &needed);
  char* buf;
  if (st != DT_OK) return st;
  buf = (char*)xmalloc(needed + 1);
  st = dt_cuda_status(state, buf, needed + 1, &needed);
  if (st != DT_OK) {
    free(buf);
    return st;
  }
  *reason = buf;
  return DT_OK;
}

static const char* cuda_state_name(int32_t state) {
  switch (state) {
    case DT_CUDA_AVAILABLE: return "available";
    case DT_CUDA_NOT_BUILT: return "not_built";
    case DT_CUDA_PLUGIN_MISSING: return "plugin_missing";
    case DT_CUDA_PLUGIN_MISMATCH: return "plugin_mismatch";
    case DT_CUDA_NO_DRIVER: return "no_driver";
    case DT_CUDA_DRIVER_TOO_OLD: return "driver_too_old";
    case DT_CUDA_NO_DEVICE: return "no_device";
    case DT_CUDA_ALL_HIDDEN: return "all_hidden";
    default: return "unknown";
  }
}

/* ------------------------------------------------------------------ JSON output */

/* Writes s as a JSON string: quotes, backslashes and control characters escaped,
 * valid UTF-8 passed through, invalid bytes replaced by U+FFFD. */
static void json_string(FILE* f, const char* s) {
  const unsigned char* p = (const unsigned char*)s;
  fputc('"', f);
  while (*p) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc(c, f);
      ++p;
    } else if (c == '\n') {
      fputs("\\n", f);
      ++p;
    } else if (c == '\r') {
      fputs("\\r", f);
      ++p;
    } else if (c == '\t') {
      fputs("\\t", f);
      ++p;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", (unsigned)c);
      ++p;
    } else if (c < 0x80) {
      fputc(c, f);
      ++p;
    } else {
      /* A UTF-8 sequence: check its length, continuation bytes and range. */
      int len = (c >= 0xc2 && c <= 0xdf) ? 2 : (c >= 0xe0 && c <= 0xef) ? 3
              : (c >= 0xf0 && c <= 0xf4) ? 4 : 0;
      int ok = len > 0, i;
      for (i = 1; ok && i < len; ++i) ok = (p[i] & 0xc0) == 0x80;
      if (ok && len == 3) {
        if (c == 0xe0 && p[1] < 0xa0) ok = 0;            /* overlong */
        if (c == 0xed && p[1] >= 0xa0) ok = 0;           /* surrogate */
      }
      if (ok && len == 4) {
        if (c == 0xf0 && p[1] < 0x90) ok = 0;            /* overlong */
        if (c == 0xf4 && p[1] >= 0x90) ok = 0;           /* > U+10FFFF */
      }
      if (ok) {
        fwrite(p, 1, (size_t)len, f);
        p += len;
      } else {
        fputs("\\ufffd", f);
        ++p;
      }
    }
  }
  fputc('"', f);
}

/* ------------------------------------------------------------------------- info */

typedef struct device_row {
  dt_device device;
  dt_device_props props;
} device_row;

/* Collects the devices to show, in display order. */
static int collect_devices(int by_free_memory, int cuda_ok, device_row** rows_out, size_t* n_out) {
  size_t n_cpu = 0, n_cuda = 0, n = 0, i;
  dt_device* order;
  device_row* rows;
  dt_status st;

  st = dt_device_count(DT_DEVICE_CPU, &n_cpu);
  if (st != DT_OK) return fail("dt_device_count(cpu)", st);
  if (cuda_ok) {
    st = dt_device_count(DT_DEVICE_CUDA, &n_cuda);
    if (st != DT_OK) return fail("dt_device_count(cuda)", st);
  }

  order = (dt_device*)xmalloc((n_cpu + n_cuda) * sizeof(dt_device));
  if (!by_free_memory) {
    /* index order: CPU devices, then GPUs */
    for (i = 0; i < n_cpu; ++i) {
      order[n].type = DT_DEVICE_CPU;
      order[n].index = (int32_t)i;
      ++n;
    }
    for (i = 0; i < n_cuda; ++i) {
      order[n].type = DT_DEVICE_CUDA;
      order[n].index = (int32_t)i;
      ++n;
    }
  } else {
    /* GPUs by free memory (the library's order), then CPU devices */
    if (n_cuda > 0) {
      size_t count = 0;
      dt_device* gpus;
      st = dt_devices_by_free_memory(NULL, 0, &count);
      if (st != DT_OK) {
        free(order);
        return fail("dt_devices_by_free_memory", st);
      }
      gpus = (dt_device*)xmalloc(count * sizeof(dt_device));
      st = dt_devices_by_free_memory(gpus, count, &count);
      if (st != DT_OK) {
        free(gpus);
        free(order);
        return fail("dt_devices_by_free_memory", st);
      }
      for (i = 0; i < count && n < n_cuda; ++i) {
        if (gpus[i].type == DT_DEVICE_CUDA) order[n++] = gpus[i];
      }
      free(gpus);
    }
    for (i = 0; i < n_cpu; ++i) {
      order[n].type = DT_DEVICE_CPU;
      order[n].index = (int32_t)i;
      ++n;
    }
  }

  rows = (device_row*)xmalloc(n * sizeof(device_row));
  for (i = 0; i < n; ++i) {
    char what[64], dev[32];
    memset(&rows[i], 0, sizeof(rows[i]));
    rows[i].device = order[i];
    rows[i].props.struct_size = sizeof(dt_device_props);
    st = dt_device_properties(order[i], &rows[i].props);
    if (st != DT_OK) {
      format_device(order[i], dev, sizeof dev);
      snprintf(what, sizeof what, "dt_device_properties(%s)", dev);
      free(rows);
      free(order);
      return fail(what, st);
    }
    rows[i].props.name[sizeof(rows[i].props.name) - 1] = '\0';
    rows[i].props.uuid[sizeof(rows[i].props.uuid) - 1] = '\0';
    rows[i].props.pci_bus_id[sizeof(rows[i].props.pci_bus_id) - 1] = '\0';
  }
  free(order);
  *rows_out = rows;
  *n_out = n;
  return 0;
}

/* One sentence on what CUDA_VISIBLE_DEVICES does here. */
static char* visible_devices_effect(const char* cvd, int32_t cuda_state, const device_row* rows,
                                    size_t n) {
  char buf[1024];
  size_t len = 0, i, k;
  int any = 0;
  if (cvd == NULL) {
    if (cuda_state == DT_CUDA_AVAILABLE) {
      return xstrdup("not set: every GPU is visible; logical ordinal = physical ordinal");
    }
    return xstrdup("not set: every GPU would be visible");
  }
  if (cuda_state == DT_CUDA_ALL_HIDDEN || (*cvd == '\0')) {
    return xstrdup("hides every GPU");
  }
  if (cuda_state != DT_CUDA_AVAILABLE) {
    return xstrdup("no effect: CUDA is unavailable");
  }
  len = (size_t)snprintf(buf, sizeof buf, "only the listed GPUs are visible, renumbered:");
  for (k = 0; k < n; ++k) { /* in logical order */
    for (i = 0; i < n && len < sizeof buf; ++i) {
      if (rows[i].device.type != DT_DEVICE_CUDA || rows[i].device.index != (int32_t)k) continue;
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s cuda:%d = physical GPU %d",
                              any ? "," : "", (int)rows[i].device.index,
                              (int)rows[i].props.physical_index);
      any = 1;
    }
  }
  if (!any) return xstrdup("no GPU visible");
  return xstrdup(buf);
}

/* Display width of a UTF-8 string: its code points (continuation bytes do not count). */
static size_t text_width(const char* s) {
  size_t w = 0;
  for (; *s; ++s) {
    if (((unsigned char)*s & 0xc0) != 0x80) ++w;
  }
  return w;
}

static void print_cell(const char* s, size_t width, int last) {
  size_t len = text_width(s);
  fputs(s, stdout);
  if (!last) {
    while (len++ < width + 2) fputc(' ', stdout);
  }
}

#define NCOLS 9

/* The "nccl: ..." line of dt_build_info without its key (allocated), or NULL when this
 * build has no CUDA plugin: whether NCCL is usable, its version, or why not. */
static char* nccl_line(void) {
  size_t needed = 0, len;
  char *info, *at, *end, *line = NULL;
  if (dt_build_info(NULL, 0, &needed) != DT_OK) return NULL;
  info = (char*)xmalloc(needed + 1);
  if (dt_build_info(info, needed + 1, &needed) == DT_OK) {
    at = strstr(info, "\nnccl: ");
    if (at) {
      at += strlen("\nnccl: ");
      end = strchr(at, '\n');
      len = end ? (size_t)(end - at) : strlen(at);
      line = (char*)xmalloc(len + 1);
      memcpy(line, at, len);
      line[len] = '\0';
    }
  }
  free(info);
  return line;
}

/* Set by cmd_info for the two printers. */
static char* g_nccl = NULL;

static int info_table(const device_row* rows, size_t n, int32_t cuda_state, const char* reason,
                      const char* cvd, const char* effect, int by_free_memory) {
  static const char* headers[NCOLS] = {"DEVICE", "NAME", "FREE", "TOTAL", "CC",
                                       "SMs/CORES", "PHYSICAL", "UUID", "PCI BUS ID"};
  char (*cells)[NCOLS][256];
  size_t width[NCOLS];
  size_t i, c;
  int show_cuda_cols = 0;

  printf("devtensor %s\n", dt_version_string());
  if (cuda_state == DT_CUDA_AVAILABLE) {
    printf("CUDA: available (%s)\n", reason);
  } else {
    printf("CUDA: unavailable [%s]: %s\n", cuda_state_name(cuda_state), reason);
  }
  if (g_nccl) printf("NCCL: %s\n", g_nccl);
  printf("CUDA_VISIBLE_DEVICES: %s%s%s (%s)\n", cvd ? "\"" : "", cvd ? cvd : "<unset>",
         cvd ? "\"" : "", effect);
  printf("order: %s\n\n", by_free_memory ? "GPUs by free memory (most first), then CPUs"
                                         : "by device type and index");

  for (i = 0; i < n; ++i) {
    if (rows[i].device.type == DT_DEVICE_CUDA) show_cuda_cols = 1;
  }

  cells = (char (*)[NCOLS][256])xmalloc((n ? n : 1) * sizeof(*cells));
  for (c = 0; c < NCOLS; ++c) width[c] = strlen(headers[c]);
  for (i = 0; i < n; ++i) {
    const dt_device_props* p = &rows[i].props;
    int is_cuda = rows[i].device.type == DT_DEVICE_CUDA;
    format_device(rows[i].device, cells[i][0], 256);
    snprintf(cells[i][1], 256, "%s", p->name);
    format_bytes(p->free_memory, cells[i][2], 256);
    format_bytes(p->total_memory, cells[i][3], 256);
    if (is_cuda) {
      snprintf(cells[i][4], 256, "%d.%d", (int)p->compute_capability_major,
               (int)p->compute_capability_minor);
    } else {
      snprintf(cells[i][4], 256, "-");
    }
    snprintf(cells[i][5], 256, "%d", (int)p->multiprocessor_count);
    snprintf(cells[i][6], 256, "%d", (int)p->physical_index);
    snprintf(cells[i][7], 256, "%s", (is_cuda && p->uuid[0]) ? p->uuid : "-");
    snprintf(cells[i][8], 256, "%s", (is_cuda && p->pci_bus_id[0]) ? p->pci_bus_id : "-");
    for (c = 0; c < NCOLS; ++c) {
      size_t l = text_width(cells[i][c]);
      if (l > width[c]) width[c] = l;
    }
  }
  {
    /* Without a GPU the CUDA-only columns (CC, UUID, PCI bus id) carry nothing. */
    size_t ncols = show_cuda_cols ? NCOLS : 7;
    int skip_cc = !show_cuda_cols;
    for (c = 0; c < ncols; ++c) {
      if (skip_cc && c == 4) continue;
      print_cell(headers[c], width[c], c + 1 == ncols);
    }
    fputc('\n', stdout);
    for (i = 0; i < n; ++i) {
      for (c = 0; c < ncols; ++c) {
        if (skip_cc && c == 4) continue;
        print_cell(cells[i][c], width[c], c + 1 == ncols);
      }
      fputc('\n', stdout);
    }
  }
  free(cells);
  return 0;
}

static void json_u64(FILE* f, const char* key, uint64_t v, int comma) {
  fprintf(f, "\"%s\": %" PRIu64 "%s", key, v, comma ? ", " : "");
}

static int info_json(const device_row* rows, size_t n, int32_t cuda_state, const char* reason,
                     const char* cvd, const char* effect, int by_free_memory) {
  size_t i, n_cuda = 0;
  for (i = 0; i < n; ++i) {
    if (rows[i].device.type == DT_DEVICE_CUDA) ++n_cuda;
  }
  printf("{\n  \"version\": ");
  json_string(stdout, dt_version_string());
  printf(",\n  \"order\": \"%s\",\n", by_free_memory ? "free_memory" : "index");
  printf("  \"cuda\": {\"available\": %s, \"status\": %d, \"status_name\": \"%s\", \"reason\": ",
         cuda_state == DT_CUDA_AVAILABLE ? "true" : "false", (int)cuda_state,
         cuda_state_name(cuda_state));
  json_string(stdout, reason);
  printf(", \"device_count\": %lu, \"cuda_visible_devices\": ", (unsigned long)n_cuda);
  if (cvd) {
    json_string(stdout, cvd);
  } else {
    fputs("null", stdout);
  }
  fputs(", \"cuda_visible_devices_effect\": ", stdout);
  json_string(stdout, effect);
  fputs("},\n  \"nccl\": ", stdout);
  if (g_nccl) {
    printf("{\"usable\": %s, \"detail\": ", strncmp(g_nccl, "usable, ", 8) == 0 ? "true" : "false");
    json_string(stdout, strncmp(g_nccl, "usable, ", 8) == 0 ? g_nccl + 8 : g_nccl);
    fputc('}', stdout);
  } else {
    fputs("null", stdout);
  }
  fputs(",\n  \"devices\": [", stdout);
  for (i = 0; i < n; ++i) {
    const dt_device_props* p = &rows[i].props;
    int is_cuda = rows[i].device.type == DT_DEVICE_CUDA;
    char dev[32];
    format_device(rows[i].device, dev, sizeof dev);
    printf("%s\n    {\"device\": ", i ? "," : "");
    json_string(stdout, dev);
    printf(", \"type\": \"%s\", \"index\": %d, \"name\": ", is_cuda ? "cuda" : "cpu",
           (int)rows[i].device.index);
    json_string(stdout, p->name);
    fputs(", ", stdout);
    json_u64(stdout, "free_memory", p->free_memory, 1);
    json_u64(stdout, "total_memory", p->total_memory, 1);
    printf("\"multiprocessor_count\": %d, \"physical_index\": %d", (int)p->multiprocessor_count,
           (int)p->physical_index);
    if (is_cuda) {
      printf(", \"compute_capability\": [%d, %d], \"uuid\": ", (int)p->compute_capability_major,
             (int)p->compute_capability_minor);
      json_string(stdout, p->uuid);
      fputs(", \"pci_bus_id\": ", stdout);
      json_string(stdout, p->pci_bus_id);
    } else {
      fputs(", \"compute_capability\": null, \"uuid\": null, \"pci_bus_id\": null", stdout);
    }
    fputc('}', stdout);
  }
  printf("%s]\n}\n", n ? "\n  " : "");
  return 0;
}

static int cmd_info(int argc, char** argv) {
  int by_free = 0, json = 0, i, rc;
  int32_t cuda_state = 0;
  char* reason = NULL;
  char* effect;
  const char* cvd;
  device_row* rows = NULL;
  size_t n = 0;
  dt_status st;

  for (i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "--by-free-memory") == 0) {
      by_free = 1;
    } else if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "%s info: unknown option '%s'\n\n", g_prog, argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }

  st = cuda_status(&cuda_state, &reason);
  if (st != DT_OK) return fail("dt_cuda_status", st);
  rc = collect_devices(by_free, cuda_state == DT_CUDA_AVAILABLE, &rows, &n);
  if (rc != 0) {
    free(reason);
    return rc;
  }
  cvd = getenv("CUDA_VISIBLE_DEVICES");
  effect = visible_devices_effect(cvd, cuda_state, rows, n);
  g_nccl = nccl_line();
  if (json) {
    rc = info_json(rows, n, cuda_state, reason, cvd, effect, by_free);
  } else {
    rc = info_table(rows, n, cuda_state, reason, cvd, effect, by_free);
  }
  free(effect);
  free(rows);
  free(reason);
  free(g_nccl);
  g_nccl = NULL;
  return rc;
}

/* ---------------------------------------------------------------------- version */

static int cmd_version(int argc, char** argv) {
  uint32_t v = dt_version();
  size_t needed = 0;
  char* info;
  dt_status st;
  int i;

  for (i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    fprintf(stderr, "%s version: unknown option '%s'\n\n", g_prog, argv[i]);
    usage(stderr);
    return EXIT_USAGE;
  }

  printf("devtensor %s\n", dt_version_string());
  if (v != (uint32_t)DT_VERSION_NUMBER) {
    fprintf(stderr,
            "%s: warning: the library is version %u.%u.%u but this tool was built against "
            "header %d.%d.%d\n",
            g_prog, (unsigned)(v / 1000000u), (unsigned)(v / 1000u % 1000u),
            (unsigned)(v % 1000u), DT_VERSION_MAJOR, DT_VERSION_MINOR, DT_VERSION_PATCH);
  }
  st = dt_build_info(NULL, 0, &needed);
  if (st != DT_OK) return fail("dt_build_info", st);
  info = (char*)xmalloc(needed + 1);
  st = dt_build_info(info, needed + 1, &needed);
  if (st != DT_OK) {
    free(info);
    return fail("dt_build_info", st);
  }
  printf("header %d.%d.%d\n", DT_VERSION_MAJOR, DT_VERSION_MINOR, DT_VERSION_PATCH);
  printf("build:\n");
  {
    /* indent each "key: value" line */
    const char* p = info;
    while (*p) {
      const char* e = strchr(p, '\n');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      if (len > 0) printf("  %.*s\n", (int)len, p);
      p += len;
      if (*p == '\n') ++p;
    }
  }
  free(info);
  return 0;
}

/* ------------------------------------------------------------------------- main */

int main(int argc, char** argv) {
  const char* cmd;
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
  if (strcmp(cmd, "run") == 0) return launcher_main(argc - 1, argv + 1);
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    return cmd_version(argc - 2, argv + 2);
  }
  fprintf(stderr, "%s: unknown command '%s'\n\n", g_prog, cmd);
  usage(stderr);
  return EXIT_USAGE;
}
