#include "test_collectives.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "devtensor.h"

namespace {

std::atomic<uint64_t> g_runs{0}, g_waits{0}, g_comms{0}, g_groups{0};

struct Clique;
struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int device = 0;
};
struct Queued {
  int32_t kind;
  dtp_coll_args args;
};
// The communicators of one coll_comm_init_all (or the one of a group of one process),
// and what their ranks queued inside the current group.
struct Clique {
  int size = 1;
  std::mutex mu;
  std::vector<std::vector<Queued>> queued;  // per rank
};

thread_local int t_group_depth = 0;
thread_local std::vector<std::shared_ptr<Clique>> t_touched;

void set_error(dtp_error* err, int32_t code, const std::string& message) {
  err->code = code;
  std::snprintf(err->message, sizeof err->message, "testcoll: %s", message.c_str());
}

size_t itemsize(int32_t dtype) {
  switch (dtype) {
    case DT_FLOAT64: case DT_INT64: return 8;
    case DT_FLOAT32: case DT_INT32: return 4;
    case DT_FLOAT16: case DT_BFLOAT16: case DT_INT16: return 2;
    default: return 1;
  }
}

// DEVTENSOR_TESTCOLL_FAIL_AT=n: the n-th collective (from 1) fails as a dead peer would.
bool injected_failure() {
  const char* v = std::getenv("DEVTENSOR_TESTCOLL_FAIL_AT");
  const long at = v ? std::atol(v) : 0L;
  return at > 0 && static_cast<long>(g_runs.load()) == at;
}

// Runs the k-th collective of every rank of a clique together.
int32_t execute(Clique& c, dtp_error* err) {
  const size_t steps = c.queued[0].size();
  for (int r = 1; r < c.size; ++r)
    if (c.queued[static_cast<size_t>(r)].size() != steps) {
      set_error(err, DT_ERR_DISTRIBUTED, "the ranks of a group queued different numbers of collectives");
      return DT_ERR_DISTRIBUTED;
    }
  for (size_t k = 0; k < steps; ++k) {
    const Queued& q0 = c.queued[0][k];
    const size_t bytes = q0.args.count * itemsize(q0.args.dtype);
    for (int r = 0; r < c.size; ++r) {
      const Queued& q = c.queued[static_cast<size_t>(r)][k];
      if (q.kind != q0.kind || q.args.count != q0.args.count) {
        set_error(err, DT_ERR_DISTRIBUTED, "the ranks of a group queued different collectives");
        return DT_ERR_DISTRIBUTED;
      }
    }
    switch (q0.kind) {
      case DTP_COLL_BROADCAST: {
        const void* from = c.queued[static_cast<size_t>(q0.args.peer)][k].args.send;
        for (int r = 0; r < c.size; ++r) {
          void* to = c.queued[static_cast<size_t>(r)][k].args.recv;
          if (to != from) std::memmove(to, from, bytes);
        }
        break;
      }
      case DTP_COLL_ALL_REDUCE: case DTP_COLL_REDUCE_SCATTER: case DTP_COLL_ALL_GATHER:
        // A group of one: the result is this rank's own data.
        if (c.size != 1) {
          set_error(err, DT_ERR_NOT_SUPPORTED, "only broadcast runs over several devices");
          return DT_ERR_NOT_SUPPORTED;
        }
        if (q0.args.recv != q0.args.send) std::memmove(q0.args.recv, q0.args.send, bytes);
        break;
      default:
        set_error(err, DT_ERR_NOT_SUPPORTED, "send and recv need a peer: testcoll groups are of one process");
        return DT_ERR_NOT_SUPPORTED;
    }
  }
  for (auto& q : c.queued) q.clear();
  return DT_OK;
}

int32_t probe(int32_t* version, char* why, size_t cap) {
  if (std::getenv("DEVTENSOR_TESTCOLL_UNUSABLE")) {
    *version = 0;
    std::snprintf(why, cap, "testcoll is switched off by DEVTENSOR_TESTCOLL_UNUSABLE");
    return 0;
  }
  *version = 100;
  std::snprintf(why, cap, "testcoll 1.0 (in the test plugin)");
  return 1;
}

int32_t unique_id(uint8_t* out, dtp_error*) {
  for (int i = 0; i < DTP_COLL_ID_BYTES; ++i) out[i] = static_cast<uint8_t>(std::rand());
  return DT_OK;
}

int32_t comm_init(int32_t device, int32_t nranks, int32_t rank, const uint8_t*, int64_t, void** out, dtp_error* err) {
  if (nranks != 1) {
    set_error(err, DT_ERR_NOT_SUPPORTED, "process groups of testdev tensors must be of one process (world size " +
                                             std::to_string(nranks) + ")");
    return DT_ERR_NOT_SUPPORTED;
  }
  auto* c = new Comm{std::make_shared<Clique>(), rank, device};
  c->clique->queued.resize(1);
  g_comms.fetch_add(1);
  *out = c;
  return DT_OK;
}

int32_t comm_init_all(int32_t ndev, const int32_t* devices, void** out, dtp_error*) {
  auto clique = std::make_shared<Clique>();
  clique->size = ndev;
  clique->queued.resize(static_cast<size_t>(ndev));
  for (int i = 0; i < ndev; ++i) {
    out[i] = new Comm{clique, i, devices[i]};
    g_comms.fetch_add(1);
  }
  return DT_OK;
}

void comm_destroy(void* comm, int32_t) {
  if (!comm) return;
  delete static_cast<Comm*>(comm);
  g_comms.fetch_sub(1);
}

int32_t group(int32_t begin, dtp_error* err) {
  if (begin) {
    ++t_group_depth;
    g_groups.fetch_add(1);
    return DT_OK;
  }
  if (t_group_depth == 0) {
    set_error(err, DT_ERR_INVALID_ARGUMENT, "group end without a start");
    return DT_ERR_INVALID_ARGUMENT;
  }
  if (--t_group_depth > 0) return DT_OK;
  int32_t rc = DT_OK;
  for (auto& c : t_touched) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (rc == DT_OK) rc = execute(*c, err);
    for (auto& q : c->queued) q.clear();
  }
  t_touched.clear();
  return rc;
}

int32_t run(int32_t kind, const dtp_coll_args* a, dtp_error* err) {
  g_runs.fetch_add(1);
  if (injected_failure()) {
    set_error(err, DT_ERR_DISTRIBUTED, "injected failure (DEVTENSOR_TESTCOLL_FAIL_AT)");
    return DT_ERR_DISTRIBUTED;
  }
  auto* comm = static_cast<Comm*>(a->comm);
  Clique& c = *comm->clique;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.queued[static_cast<size_t>(comm->rank)].push_back(Queued{kind, *a});
  }
  if (t_group_depth > 0) {
    bool seen = false;
    for (auto& t : t_touched) seen = seen || t.get() == &c;
    if (!seen) t_touched.push_back(comm->clique);
    return DT_OK;
  }
  if (c.size > 1) {
    set_error(err, DT_ERR_INVALID_ARGUMENT, "a communicator of several devices driven outside a group would hang");
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto& q : c.queued) q.clear();
    return DT_ERR_INVALID_ARGUMENT;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  return execute(c, err);
}

int32_t wait(void*, int32_t, void*, int64_t, dtp_error*) {
  g_waits.fetch_add(1);
  return DT_OK;
}

}  // namespace

void set_test_collectives(dtp_backend& t) {
  t.coll_name = "testcoll";
  t.coll_probe = &probe;
  t.coll_unique_id = &unique_id;
  t.coll_comm_init = &comm_init;
  t.coll_comm_init_all = &comm_init_all;
  t.coll_comm_destroy = &comm_destroy;
  t.coll_group = &group;
  t.coll_run = &run;
  t.coll_wait = &wait;
}

// For the tests: {collectives run, waits, live communicators, groups started}.
extern "C" __attribute__((visibility("default"))) void devtensor_test_backend_coll_counts(uint64_t out[4]) {
  out[0] = g_runs.load();
  out[1] = g_waits.load();
  out[2] = g_comms.load();
  out[3] = g_groups.load();
}
