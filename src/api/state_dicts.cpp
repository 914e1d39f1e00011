// State-dict entry points: an ordered name -> tensor map (dt_state_dict), and its
// safetensors files (dt_safetensors_save / dt_safetensors_load).
#include "api/state_dicts.h"

#include "api/shim.h"
#include "core/utf8.h"
#include "io/safetensors_io.h"

using namespace dt;
using namespace dt::api;

namespace dt::api {

namespace {
void destroy_state_dict(void* object) { delete static_cast<io::StateDict*>(object); }
}  // namespace

io::StateDict& state_dict_arg(const dt_state_dict* h, const char* fn, const char* param) {
  if (!h) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " is NULL"));
  return *static_cast<io::StateDict*>(handle_resolve(h, HandleKind::StateDict, fn));
}

dt_state_dict* new_state_dict_handle(std::unique_ptr<io::StateDict> sd) {
  void* h = handle_create(HandleKind::StateDict, sd.get(), destroy_state_dict);
  sd.release();  // the handle owns it now
  return static_cast<dt_state_dict*>(h);
}

}  // namespace dt::api

extern "C" {

DT_API dt_status dt_state_dict_new(dt_state_dict** out) {
  return guard([&] {
    require(out, "dt_state_dict_new", "out");
    *out = new_state_dict_handle(std::make_unique<io::StateDict>());
  });
}

DT_API dt_status dt_state_dict_retain(dt_state_dict* sd) {
  return guard([&] {
    require(sd, "dt_state_dict_retain", "sd");
    handle_retain(sd, HandleKind::StateDict);
  });
}

DT_API dt_status dt_state_dict_release(dt_state_dict* sd) {
  if (!sd) return DT_OK;
  return guard([&] { handle_release(sd, HandleKind::StateDict); });
}

DT_API dt_status dt_state_dict_count(const dt_state_dict* sd, size_t* out) {
  return guard([&] {
    require(out, "dt_state_dict_count", "out");
    *out = state_dict_arg(sd, "dt_state_dict_count", "sd").size();
  });
}

DT_API dt_status dt_state_dict_name(const dt_state_dict* sd, size_t i, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    const char* fn = "dt_state_dict_name";
    check_string_buffer(buf, cap, fn);
    write_string(state_dict_arg(sd, fn, "sd").name(i, fn), buf, cap, needed);
  });
}

DT_API dt_status dt_state_dict_get(const dt_state_dict* sd, size_t i, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_state_dict_get";
    require(out, fn, "out");
    Tensor t = state_dict_arg(sd, fn, "sd").at(i, fn);
    *out = new_handle(std::move(t));
  });
}

DT_API dt_status dt_state_dict_find(const dt_state_dict* sd, const char* name, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_state_dict_find";
    require(out, fn, "out");
    require(name, fn, "name");
    io::StateDict& d = state_dict_arg(sd, fn, "sd");
    Tensor t = d.find(name);
    if (!t.defined())
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": no tensor named \"", name, "\" in the state dict (", d.size(),
                                        d.size() == 1 ? " entry)" : " entries)"));
    *out = new_handle(std::move(t));
  });
}

DT_API dt_status dt_state_dict_set(dt_state_dict* sd, const char* name, const dt_tensor* t) {
  return guard([&] {
    const char* fn = "dt_state_dict_set";
    require(name, fn, "name");
    io::StateDict& d = state_dict_arg(sd, fn, "sd");
    Borrowed x = tensor_arg(t, fn, "t");
    std::string key(name);
    if (!valid_utf8(key)) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the name is not valid UTF-8"));
    d.set(key, x);
  });
}

DT_API dt_status dt_safetensors_save(const dt_state_dict* sd, const char* path) {
  return guard([&] {
    const char* fn = "dt_safetensors_save";
    require(path, fn, "path");
    io::StateDict& d = state_dict_arg(sd, fn, "sd");
    if (!*path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is empty"));
    io::save_safetensors(d, path, fn);
  });
}

DT_API dt_status dt_safetensors_load(const char* path, dt_device device, dt_state_dict** out) {
  return guard([&] {
    const char* fn = "dt_safetensors_load";
    require(out, fn, "out");
    require(path, fn, "path");
    Device d = resolve_device(device);
    if (!*path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is empty"));
    std::unique_ptr<io::StateDict> loaded = io::load_safetensors(path, d, fn);
    *out = new_state_dict_handle(std::move(loaded));
  });
}

}  // extern "C"
