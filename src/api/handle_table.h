// The handle table: every handle the C ABI gives out is the address of a slot here with
// a 16-bit generation in the pointer's top bits. Slots are never unmapped, so checking a
// stale handle reads valid memory: a released, doubly released or foreign handle is
// reported as DT_ERR_INVALID_HANDLE instead of crashing. Each slot holds the handle's
// own reference count and one strong reference to the object behind it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dt {

enum class HandleKind : uint32_t { Tensor = 1, Module = 2, Optimizer = 3, StateDict = 4 };
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

}  // namespace dt
