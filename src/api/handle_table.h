// The handle table: every handle the C ABI gives out is a 64-bit value naming a slot
// here (its low 24 bits) and the slot's generation (the upper 40 bits). Slots are never
// unmapped and generations only grow (a slot that used its last one is retired), so no
// handle value is ever given out twice in a process and checking a stale handle reads
// valid memory: a released, doubly released or foreign handle is reported as
// DT_ERR_INVALID_HANDLE, never a crash or another object. Each slot holds the handle's
// own reference count and one strong reference to the object behind it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dt {

enum class HandleKind : uint32_t { Tensor = 1, Module = 2, Optimizer = 3, StateDict = 4, Stream = 5, Event = 6, ProcessGroup = 7, Graph = 8, LrScheduler = 9 };
const char* handle_kind_name(HandleKind k);

using HandleDestroy = void (*)(void* object);

// Registers object under a new handle with one reference. Throws OUT_OF_MEMORY.
void* handle_create(HandleKind kind, void* object, HandleDestroy destroy);
// The object behind a live handle of this kind; throws INVALID_HANDLE otherwise.
// Borrowed: valid while the caller holds a reference to the handle.
void* handle_resolve(const void* handle, HandleKind kind, const char* what);
void handle_retain(const void* handle, HandleKind kind);
// Drops one reference; the last one destroys the object and frees the slot.
void handle_release(const void* handle, HandleKind kind);
size_t handle_live_count();
// Test hook: gives a live handle's slot its last generation, so that its release
// retires the slot; returns the handle's new value (the old one stops matching).
void* handle_age_to_last_generation(const void* handle, HandleKind kind);

}  // namespace dt
