// Process group and collective entry points (dist/process_group.h).
#include "api/objects.h"
#include "api/shim.h"
#include "dist/process_group.h"

using namespace dt;
using namespace dt::api;
using dt::dist::ProcessGroup;
using dt::dist::Reduction;

namespace {

// The group behind pg, with a reference held for the call: a collective can block for
// the whole timeout, and a release from another thread meanwhile must not free it.
Ref<ProcessGroup> group_arg(const dt_process_group* pg, const char* fn) {
  ProcessGroup* g = object_arg<ProcessGroup, HandleKind::ProcessGroup>(pg, fn, "pg");
  g->ref();
  return Ref<ProcessGroup>::adopt(g);
}

Reduction reduction_arg(int32_t op, const char* fn) {
  if (op < DT_REDUCE_SUM || op > DT_REDUCE_PRODUCT)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": op ", op, " is not one of DT_REDUCE_SUM (0), AVG (1), MIN (2), MAX (3), PRODUCT (4)"));
  return static_cast<Reduction>(op);
}

}  // namespace

extern "C" {

DT_API dt_status dt_process_group_new(const char* backend, const char* init_method, int32_t rank, int32_t world_size,
                                      int64_t timeout_ms, dt_process_group** out) {
  return guard([&] {
    require(out, "dt_process_group_new", "out");
    if (timeout_ms < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_process_group_new: timeout_ms ", timeout_ms, " is negative"));
    const int64_t ms = timeout_ms == 0 ? int64_t{30} * 60 * 1000 : timeout_ms;
    Ref<ProcessGroup> g = ProcessGroup::create(backend ? backend : "", init_method, rank, world_size,
                                               std::chrono::milliseconds(ms));
    *out = static_cast<dt_process_group*>(new_object_handle<ProcessGroup, HandleKind::ProcessGroup>(g.release()));
  });
}

DT_API dt_status dt_process_group_retain(dt_process_group* pg) {
  return guard([&] {
    require(pg, "dt_process_group_retain", "pg");
    handle_retain(pg, HandleKind::ProcessGroup);
  });
}

DT_API dt_status dt_process_group_release(dt_process_group* pg) {
  return guard([&] {
    if (pg) handle_release(pg, HandleKind::ProcessGroup);
  });
}

DT_API dt_status dt_process_group_rank(const dt_process_group* pg, int32_t* out) {
  return guard([&] {
    require(out, "dt_process_group_rank", "out");
    *out = group_arg(pg, "dt_process_group_rank")->rank();
  });
}

DT_API dt_status dt_process_group_size(const dt_process_group* pg, int32_t* out) {
  return guard([&] {
    require(out, "dt_process_group_size", "out");
    *out = group_arg(pg, "dt_process_group_size")->size();
  });
}

DT_API dt_status dt_process_group_backend(const dt_process_group* pg, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_process_group_backend");
    write_string(group_arg(pg, "dt_process_group_backend")->backend(), buf, cap, needed);
  });
}

DT_API dt_status dt_all_reduce_(const dt_process_group* pg, const dt_tensor* t, int32_t op) {
  return guard([&] {
    auto g = group_arg(pg, "dt_all_reduce_");
    Reduction r = reduction_arg(op, "dt_all_reduce_");
    g->all_reduce(tensor_arg(t, "dt_all_reduce_", "t"), r);
  });
}

DT_API dt_status dt_broadcast_(const dt_process_group* pg, const dt_tensor* t, int32_t root) {
  return guard([&] {
    auto g = group_arg(pg, "dt_broadcast_");
    g->broadcast(tensor_arg(t, "dt_broadcast_", "t"), root);
  });
}

DT_API dt_status dt_all_gather(const dt_process_group* pg, const dt_tensor* input, const dt_tensor* output) {
  return guard([&] {
    auto g = group_arg(pg, "dt_all_gather");
    auto in = tensor_arg(input, "dt_all_gather", "input");
    auto o = tensor_arg(output, "dt_all_gather", "output");
    g->all_gather(in, o);
  });
}

DT_API dt_status dt_reduce_scatter(const dt_process_group* pg, const dt_tensor* input, const dt_tensor* output,
                                   int32_t op) {
  return guard([&] {
    auto g = group_arg(pg, "dt_reduce_scatter");
    Reduction r = reduction_arg(op, "dt_reduce_scatter");
    auto in = tensor_arg(input, "dt_reduce_scatter", "input");
    auto o = tensor_arg(output, "dt_reduce_scatter", "output");
    g->reduce_scatter(in, o, r);
  });
}

DT_API dt_status dt_barrier(const dt_process_group* pg) {
  return guard([&] { group_arg(pg, "dt_barrier")->barrier(); });
}

DT_API dt_status dt_send(const dt_process_group* pg, const dt_tensor* t, int32_t dst, int32_t tag) {
  return guard([&] {
    auto g = group_arg(pg, "dt_send");
    g->send(tensor_arg(t, "dt_send", "t"), dst, tag);
  });
}

DT_API dt_status dt_recv(const dt_process_group* pg, const dt_tensor* t, int32_t src, int32_t tag) {
  return guard([&] {
    auto g = group_arg(pg, "dt_recv");
    g->recv(tensor_arg(t, "dt_recv", "t"), src, tag);
  });
}

}  // extern "C"
