/*
 * dist_collectives: one rank of the collectives check, started world_size times by
 * `devtensor run` (tests/dist/CMakeLists.txt runs it over 2 and 4 processes). Every rank
 * fills its tensors with values it can compute for every other rank, runs each
 * collective for every dtype and reduction, and compares what comes back with the
 * expectation computed here in plain C doubles (never through devtensor). The values are
 * small integers, so every dtype holds them and the results exactly.
 * Exit status: 0 all checks passed, 1 a check failed (the first is printed).
 */
#include <devtensor.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_world, g_checks;

#define CHECK_OK(call)                                                                     \
  do {                                                                                     \
    dt_status st_ = (call);                                                                \
    if (st_ != DT_OK) {                                                                    \
      fprintf(stderr, "rank %d: %s:%d: %s failed: %s: %s\n", g_rank, __FILE__, __LINE__, #call, \
              dt_status_string(st_), dt_last_error_message());                             \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

#define CHECK_STATUS(call, want, text)                                                     \
  do {                                                                                     \
    dt_status st_ = (call);                                                                \
    if (st_ != (want) || !strstr(dt_last_error_message(), (text))) {                       \
      fprintf(stderr, "rank %d: %s:%d: %s gave %s (\"%s\"), expected %s with \"%s\"\n", g_rank, __FILE__, \
              __LINE__, #call, dt_status_string(st_), dt_last_error_message(), dt_status_string(want), text); \
      exit(1);                                                                             \
    }                                                                                      \
    ++g_checks;                                                                            \
  } while (0)

static const dt_dtype kDtypes[] = {DT_FLOAT32, DT_FLOAT64, DT_FLOAT16, DT_BFLOAT16, DT_INT8,
                                   DT_INT16,   DT_INT32,   DT_INT64,   DT_UINT8,    DT_BOOL};
static const int32_t kOps[] = {DT_REDUCE_SUM, DT_REDUCE_AVG, DT_REDUCE_MIN, DT_REDUCE_MAX, DT_REDUCE_PRODUCT};
static const char* kOpNames[] = {"sum", "avg", "min", "max", "product"};

static dt_device cpu(void) {
  dt_device d = {DT_DEVICE_CPU, 0};
  return d;
}

static int is_float(dt_dtype d) { return d == DT_FLOAT32 || d == DT_FLOAT64 || d == DT_FLOAT16 || d == DT_BFLOAT16; }

/* Rank r's element i for dtype d: -2..2 for signed and floating types, 1..3 for uint8,
 * 0/1 for bool. A product over 4 ranks stays within int8 and uint8. */
static double value(int r, long i, dt_dtype d) {
  long k = (r * 7 + i * 3) % 5;
  if (d == DT_UINT8) return (double)(k % 3 + 1);
  if (d == DT_BOOL) return (double)((r + i) % 3 != 0);
  return (double)(k - 2);
}

static double expected_reduce(long i, dt_dtype d, int32_t op) {
  double acc = value(0, i, d);
  for (int r = 1; r < g_world; ++r) {
    double v = value(r, i, d);
    switch (op) {
      case DT_REDUCE_SUM: case DT_REDUCE_AVG: acc += v; break;
      case DT_REDUCE_MIN: acc = v < acc ? v : acc; break;
      case DT_REDUCE_MAX: acc = v > acc ? v : acc; break;
      case DT_REDUCE_PRODUCT: acc *= v; break;
    }
  }
  if (op == DT_REDUCE_AVG) acc /= g_world;
  if (d == DT_BOOL) acc = acc != 0;  /* or / and of 0/1 values */
  return acc;
}

/* A tensor of dtype d and shape [n] from doubles (made as float64, then converted). */
static dt_tensor* make(const double* v, long n, dt_dtype d) {
  int64_t shape[1] = {n};
  dt_tensor *f64 = NULL, *t = NULL;
  CHECK_OK(dt_tensor_from_data(v, (size_t)n * sizeof(double), shape, 1, DT_FLOAT64, cpu(), &f64));
  CHECK_OK(dt_tensor_to(f64, cpu(), d, DT_TO_COPY, &t));
  dt_tensor_release(f64);
  return t;
}

/* t's elements as doubles, in a malloc'd array. */
static double* read_back(const dt_tensor* t, long n) {
  dt_tensor* f64 = NULL;
  CHECK_OK(dt_tensor_to(t, cpu(), DT_FLOAT64, DT_TO_COPY, &f64));
  dt_tensor* flat = NULL;
  CHECK_OK(dt_contiguous(f64, &flat));
  double* out = malloc((size_t)n * sizeof(double) + 1);
  CHECK_OK(dt_tensor_copy_to_host(flat, out, (size_t)n * sizeof(double)));
  dt_tensor_release(flat);
  dt_tensor_release(f64);
  return out;
}

/* Exact, except for averages over a world size that is not a power of two (rounded in
 * the dtype): tol is the absolute error allowed. */
static void expect_close(const char* what, dt_dtype d, const double* got, const double* want, long n, double tol) {
  for (long i = 0; i < n; ++i) {
    if (fabs(got[i] - want[i]) > tol || isnan(got[i]) != isnan(want[i])) {
      fprintf(stderr, "rank %d: %s (%s): element %ld is %g, expected %g\n", g_rank, what, dt_dtype_name(d), i, got[i],
              want[i]);
      exit(1);
    }
  }
  ++g_checks;
}

static void expect_values(const char* what, dt_dtype d, const double* got, const double* want, long n) {
  expect_close(what, d, got, want, n, 0.0);
}

static double* rank_values(int r, long n, dt_dtype d) {
  double* v = malloc((size_t)n * sizeof(double) + 1);
  for (long i = 0; i < n; ++i) v[i] = value(r, i, d);
  return v;
}

static void check_all_reduce(dt_process_group* pg, dt_dtype d, int32_t op, long n) {
  double* mine = rank_values(g_rank, n, d);
  dt_tensor* t = make(mine, n, d);
  if (op == DT_REDUCE_AVG && !is_float(d)) {
    CHECK_STATUS(dt_all_reduce_(pg, t, op), DT_ERR_DTYPE_MISMATCH, "avg needs a floating dtype");
  } else {
    CHECK_OK(dt_all_reduce_(pg, t, op));
    double* want = malloc((size_t)n * sizeof(double) + 1);
    for (long i = 0; i < n; ++i) want[i] = expected_reduce(i, d, op);
    double* got = read_back(t, n);
    char what[64];
    snprintf(what, sizeof what, "all_reduce %s n=%ld", kOpNames[op], n);
    /* avg over a power-of-two world is exact (the sums are small integers); over 3 ranks
       the division rounds. */
    const int pow2 = (g_world & (g_world - 1)) == 0;
    expect_close(what, d, got, want, n, op == DT_REDUCE_AVG && !pow2 ? 1e-2 : 0.0);
    free(got);
    free(want);
  }
  dt_tensor_release(t);
  free(mine);
}

static void check_broadcast(dt_process_group* pg, dt_dtype d, int root, long n) {
  double* mine = rank_values(g_rank, n, d);
  double* want = rank_values(root, n, d);
  dt_tensor* t = make(mine, n, d);
  CHECK_OK(dt_broadcast_(pg, t, root));
  double* got = read_back(t, n);
  expect_values("broadcast", d, got, want, n);
  free(got);
  free(want);
  free(mine);
  dt_tensor_release(t);
}

static void check_all_gather(dt_process_group* pg, dt_dtype d, long n) {
  double* mine = rank_values(g_rank, n, d);
  dt_tensor* in = make(mine, n, d);
  int64_t shape[2] = {g_world, n};
  dt_tensor* out = NULL;
  CHECK_OK(dt_tensor_zeros(shape, 2, d, cpu(), &out));
  CHECK_OK(dt_all_gather(pg, in, out));
  double* want = malloc((size_t)(n * g_world) * sizeof(double) + 1);
  for (int r = 0; r < g_world; ++r)
    for (long i = 0; i < n; ++i) want[r * n + i] = value(r, i, d);
  double* got = read_back(out, n * g_world);
  expect_values("all_gather", d, got, want, n * g_world);
  free(got);
  free(want);
  free(mine);
  dt_tensor_release(in);
  dt_tensor_release(out);
}

/* Element i of rank r's reduce_scatter input is value(r, i); rank r keeps part r. */
static void check_reduce_scatter(dt_process_group* pg, dt_dtype d, int32_t op, long n) {
  long total = n * g_world;
  double* mine = rank_values(g_rank, total, d);
  dt_tensor* in = make(mine, total, d);
  int64_t shape[1] = {n};
  dt_tensor* out = NULL;
  CHECK_OK(dt_tensor_zeros(shape, 1, d, cpu(), &out));
  if (op == DT_REDUCE_AVG && !is_float(d)) {
    CHECK_STATUS(dt_reduce_scatter(pg, in, out, op), DT_ERR_DTYPE_MISMATCH, "avg needs a floating dtype");
  } else {
    CHECK_OK(dt_reduce_scatter(pg, in, out, op));
    double* want = malloc((size_t)n * sizeof(double) + 1);
    for (long i = 0; i < n; ++i) want[i] = expected_reduce(g_rank * n + i, d, op);
    double* got = read_back(out, n);
    char what[64];
    snprintf(what, sizeof what, "reduce_scatter %s", kOpNames[op]);
    /* avg over a power-of-two world is exact (the sums are small integers); over 3 ranks
       the division rounds. */
    const int pow2 = (g_world & (g_world - 1)) == 0;
    expect_close(what, d, got, want, n, op == DT_REDUCE_AVG && !pow2 ? 1e-2 : 0.0);
    free(got);
    free(want);
  }
  free(mine);
  dt_tensor_release(in);
  dt_tensor_release(out);
}

/* Each rank sends to the next and receives from the previous one, tagged by sender. */
static void check_send_recv(dt_process_group* pg, dt_dtype d, long n) {
  int next = (g_rank + 1) % g_world, prev = (g_rank + g_world - 1) % g_world;
  double* mine = rank_values(g_rank, n, d);
  double* want = rank_values(prev, n, d);
  dt_tensor* out = make(mine, n, d);
  int64_t shape[1] = {n};
  dt_tensor* in = NULL;
  CHECK_OK(dt_tensor_zeros(shape, 1, d, cpu(), &in));
  /* Even ranks send first, odd ranks receive first: no two ranks wait on each other. */
  if (g_rank % 2 == 0) {
    CHECK_OK(dt_send(pg, out, next, 100 + g_rank));
    CHECK_OK(dt_recv(pg, in, prev, 100 + prev));
  } else {
    CHECK_OK(dt_recv(pg, in, prev, 100 + prev));
    CHECK_OK(dt_send(pg, out, next, 100 + g_rank));
  }
  double* got = read_back(in, n);
  expect_values("send/recv", d, got, want, n);
  free(got);
  free(want);
  free(mine);
  dt_tensor_release(in);
  dt_tensor_release(out);
}

/* A transposed view: the sum lands in the caller's strided tensor. */
static void check_non_contiguous(dt_process_group* pg) {
  const long rows = 3, cols = 4, n = rows * cols;
  double* mine = rank_values(g_rank, n, DT_FLOAT32);
  dt_tensor* base = make(mine, n, DT_FLOAT32);
  int64_t shape[2] = {rows, cols};
  dt_tensor *m = NULL, *t = NULL;
  CHECK_OK(dt_reshape(base, shape, 2, &m));
  CHECK_OK(dt_transpose(m, 0, 1, &t));
  CHECK_OK(dt_all_reduce_(pg, t, DT_REDUCE_SUM));
  double* want = malloc((size_t)n * sizeof(double));
  for (long i = 0; i < n; ++i) want[i] = expected_reduce(i, DT_FLOAT32, DT_REDUCE_SUM);
  double* got = read_back(base, n); /* the base sees the sums in its own order */
  expect_values("all_reduce of a transposed view", DT_FLOAT32, got, want, n);
  free(got);
  free(want);
  free(mine);
  dt_tensor_release(t);
  dt_tensor_release(m);
  dt_tensor_release(base);
}

static void check_errors(dt_process_group* pg) {
  int64_t shape[1] = {4};
  dt_tensor *t = NULL, *big = NULL, *i32 = NULL;
  CHECK_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, cpu(), &t));
  CHECK_STATUS(dt_all_reduce_(pg, t, 9), DT_ERR_INVALID_ARGUMENT, "op 9 is not one of");
  CHECK_STATUS(dt_broadcast_(pg, t, g_world), DT_ERR_INVALID_ARGUMENT, "is not a rank of this group");
  CHECK_STATUS(dt_send(pg, t, g_rank, 0), DT_ERR_INVALID_ARGUMENT, "is this rank");
  CHECK_STATUS(dt_recv(pg, t, 0, -1), DT_ERR_INVALID_ARGUMENT, g_rank == 0 ? "is this rank" : "must be >= 0");
  if (g_world > 1) CHECK_STATUS(dt_all_gather(pg, t, t), DT_ERR_SHAPE_MISMATCH, "expected world size");
  int64_t bshape[1] = {4 * g_world};
  CHECK_OK(dt_tensor_zeros(bshape, 1, DT_INT32, cpu(), &i32));
  CHECK_OK(dt_tensor_zeros(bshape, 1, DT_FLOAT32, cpu(), &big));
  CHECK_STATUS(dt_all_gather(pg, t, i32), DT_ERR_DTYPE_MISMATCH, "but input is float32");
  CHECK_STATUS(dt_all_reduce_(NULL, t, DT_REDUCE_SUM), DT_ERR_INVALID_ARGUMENT, "pg is NULL");
  CHECK_STATUS(dt_all_reduce_(pg, NULL, DT_REDUCE_SUM), DT_ERR_INVALID_ARGUMENT, "t is NULL");
  CHECK_STATUS(dt_all_reduce_((const dt_process_group*)t, t, DT_REDUCE_SUM), DT_ERR_INVALID_HANDLE,
               "expected a process group handle");
  /* Argument errors leave the group usable: every rank still meets at the barrier. */
  CHECK_OK(dt_barrier(pg));
  ++g_checks;
  dt_tensor_release(t);
  dt_tensor_release(big);
  dt_tensor_release(i32);
}

int main(void) {
  dt_process_group* pg = NULL;
  CHECK_OK(dt_process_group_new(NULL, NULL, -1, -1, 60000, &pg));
  CHECK_OK(dt_process_group_rank(pg, &g_rank));
  CHECK_OK(dt_process_group_size(pg, &g_world));
  /* Chosen by device: Gloo, with NCCL for CUDA tensors where NCCL is usable. */
  char name[32], info[4096];
  size_t needed = 0;
  CHECK_OK(dt_process_group_backend(pg, name, sizeof name, &needed));
  CHECK_OK(dt_build_info(info, sizeof info, &needed));
  const char* expected = strstr(info, "\nnccl: usable") ? "gloo,nccl" : "gloo";
  if (strcmp(name, expected) != 0) {
    fprintf(stderr, "rank %d: backend is \"%s\", expected \"%s\"\n", g_rank, name, expected);
    return 1;
  }
  const char* env_rank = getenv("RANK");
  if (!env_rank || atoi(env_rank) != g_rank) {
    fprintf(stderr, "rank %d: RANK is %s\n", g_rank, env_rank ? env_rank : "(unset)");
    return 1;
  }

  for (size_t k = 0; k < sizeof kDtypes / sizeof kDtypes[0]; ++k) {
    dt_dtype d = kDtypes[k];
    for (size_t o = 0; o < sizeof kOps / sizeof kOps[0]; ++o) {
      check_all_reduce(pg, d, kOps[o], 15);
      check_reduce_scatter(pg, d, kOps[o], 7);
    }
    for (int root = 0; root < g_world; ++root) check_broadcast(pg, d, root, 9);
    check_all_gather(pg, d, 6);
    if (g_world > 1) check_send_recv(pg, d, 5);
  }
  /* Small all-reduces (above: at most 4 MiB gathered) take an allgather and a local
     reduction; these take Gloo's ring, larger than its segments, for every op. Then
     empty tensors (no bytes move). */
  check_all_reduce(pg, DT_FLOAT32, DT_REDUCE_SUM, 1 << 20);
  for (size_t o = 0; o < sizeof kOps / sizeof kOps[0]; ++o) check_all_reduce(pg, DT_FLOAT64, kOps[o], 300001);
  check_all_reduce(pg, DT_FLOAT64, DT_REDUCE_MAX, 0);
  check_broadcast(pg, DT_INT64, g_world - 1, 300001);
  check_non_contiguous(pg);
  check_errors(pg);
  CHECK_OK(dt_barrier(pg));
  CHECK_OK(dt_process_group_release(pg));
  printf("rank %d of %d: %d checks passed\n", g_rank, g_world, g_checks);
  return 0;
}
