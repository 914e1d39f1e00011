//! DLPack 1.0's `DLManagedTensorVersioned`, written by hand.
//!
//! Why not generated: `include/devtensor.h` only forward-declares
//! `struct DLManagedTensorVersioned;` (its users include their own `dlpack.h`, and
//! Debian's `dlpack.h` is DLPack 0.6, which lacks the struct; the library declares it in
//! `src/io/dlpack_versioned.h`). bindgen therefore sees an incomplete type and emits an
//! opaque `DLManagedTensorVersioned { _unused: [u8; 0] }`, whose fields (the version and
//! the read-only flag above all) cannot be read or written. The definitions below are
//! the layout the DLPack 1.0 specification fixes, written as bindgen writes them from a
//! `dlpack.h` (same names, field types and derives), so they would not change if the
//! header ever declared the complete types. The layout tests at the end check the sizes
//! and offsets; the crate's tests exchange structs with the library.
//!
//! They replace bindgen's opaque struct at the crate root: `lib.rs` includes the
//! generated `bindings.rs` in a private module and re-exports it with a glob, which the
//! explicit re-exports of this module's names shadow. The three functions that take the
//! struct are declared again here with the complete type (same symbols, same ABI: a
//! pointer is a pointer), so `dt_tensor_to_dlpack_versioned(t, &mut p)` with
//! `p: *mut DLManagedTensorVersioned` needs no cast. A compile-time check below fails
//! the build if the header's signatures change. The unversioned `DLManagedTensor` stays
//! bindgen's opaque struct, as before.
use crate::generated::{dt_status, dt_tensor};
use std::os::raw::{c_int, c_uint, c_void};

/// `DLDeviceType` (a C enum in `dlpack.h`).
pub type DLDeviceType = c_uint;
/// `kDLCPU`: host memory.
pub const DLDeviceType_kDLCPU: DLDeviceType = 1;
/// `kDLCUDA`: CUDA device memory.
pub const DLDeviceType_kDLCUDA: DLDeviceType = 2;
/// `kDLCUDAHost`: page-locked host memory (devtensor imports it as CPU memory).
pub const DLDeviceType_kDLCUDAHost: DLDeviceType = 3;

/// `DLDataTypeCode` (a C enum in `dlpack.h`; `DLDataType::code` holds it as a `u8`).
pub type DLDataTypeCode = c_uint;
/// `kDLInt`: signed integer.
pub const DLDataTypeCode_kDLInt: DLDataTypeCode = 0;
/// `kDLUInt`: unsigned integer.
pub const DLDataTypeCode_kDLUInt: DLDataTypeCode = 1;
/// `kDLFloat`: IEEE floating point.
pub const DLDataTypeCode_kDLFloat: DLDataTypeCode = 2;
/// `kDLBfloat`: bfloat16.
pub const DLDataTypeCode_kDLBfloat: DLDataTypeCode = 4;
/// `kDLBool` (DLPack 0.8 and later): bool, 8 bits.
pub const DLDataTypeCode_kDLBool: DLDataTypeCode = 6;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write the memory.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer copied the data for this export.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

/// `DLDevice`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: c_int,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// `DLTensor`: the memory, device, shape, dtype and strides (in elements; NULL for
/// compact row-major) of a tensor.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: c_int,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLPackVersion`: devtensor exports `{1, 0}` and imports major version 1 only.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// `DLManagedTensorVersioned` (DLPack 1.0): `dl_tensor` plus the version, the owner's
/// context, the deleter to call exactly once, and `DLPACK_FLAG_BITMASK_*` flags.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

// The generated declarations, with the complete struct instead of the opaque one (see
// the module's documentation). bindgen's declarations of the same symbols stay in the
// private `generated` module, hence the allow.
#[allow(clashing_extern_declarations)]
extern "C" {
    pub fn dt_tensor_to_dlpack_versioned(
        t: *const dt_tensor,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> dt_status;
    pub fn dt_tensor_from_dlpack_versioned(
        managed: *mut DLManagedTensorVersioned,
        out: *mut *mut dt_tensor,
    ) -> dt_status;
    pub fn dt_tensor_from_dlpack_versioned_stream(
        managed: *mut DLManagedTensorVersioned,
        producer_stream: i64,
        out: *mut *mut dt_tensor,
    ) -> dt_status;
}

// Fails to compile when the header's signatures no longer match the ones above (modulo
// the struct, opaque there): regenerate, then update the declarations above.
const _: () = {
    type Opaque = crate::generated::DLManagedTensorVersioned;
    let _: unsafe extern "C" fn(*const dt_tensor, *mut *mut Opaque) -> dt_status =
        crate::generated::dt_tensor_to_dlpack_versioned;
    let _: unsafe extern "C" fn(*mut Opaque, *mut *mut dt_tensor) -> dt_status =
        crate::generated::dt_tensor_from_dlpack_versioned;
    let _: unsafe extern "C" fn(*mut Opaque, i64, *mut *mut dt_tensor) -> dt_status =
        crate::generated::dt_tensor_from_dlpack_versioned_stream;
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::ptr::addr_of;

    /// The byte offset of a field, without a reference to uninitialised memory.
    macro_rules! offset {
        ($t:ty, $f:ident) => {{
            let u = MaybeUninit::<$t>::uninit();
            let base = u.as_ptr();
            // SAFETY: addr_of! computes the address without reading or referencing.
            (unsafe { addr_of!((*base).$f) } as usize) - (base as usize)
        }};
    }

    #[test]
    fn small_structs_have_dlpacks_layout() {
        assert_eq!(
            (size_of::<DLPackVersion>(), align_of::<DLPackVersion>()),
            (8, 4)
        );
        assert_eq!(offset!(DLPackVersion, major), 0);
        assert_eq!(offset!(DLPackVersion, minor), 4);
        assert_eq!((size_of::<DLDevice>(), align_of::<DLDevice>()), (8, 4));
        assert_eq!(offset!(DLDevice, device_id), 4);
        assert_eq!((size_of::<DLDataType>(), align_of::<DLDataType>()), (4, 2));
        assert_eq!(offset!(DLDataType, bits), 1);
        assert_eq!(offset!(DLDataType, lanes), 2);
    }

    // The offsets of the DLPack 1.0 structs on a 64-bit target (what the library, built
    // from the same C declaration, uses).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn managed_tensor_versioned_has_dlpack_1_0_layout_on_64_bit() {
        assert_eq!((size_of::<DLTensor>(), align_of::<DLTensor>()), (48, 8));
        assert_eq!(offset!(DLTensor, data), 0);
        assert_eq!(offset!(DLTensor, device), 8);
        assert_eq!(offset!(DLTensor, ndim), 16);
        assert_eq!(offset!(DLTensor, dtype), 20);
        assert_eq!(offset!(DLTensor, shape), 24);
        assert_eq!(offset!(DLTensor, strides), 32);
        assert_eq!(offset!(DLTensor, byte_offset), 40);

        type M = DLManagedTensorVersioned;
        assert_eq!((size_of::<M>(), align_of::<M>()), (80, 8));
        assert_eq!(offset!(M, version), 0);
        assert_eq!(offset!(M, manager_ctx), 8);
        assert_eq!(offset!(M, deleter), 16);
        assert_eq!(offset!(M, flags), 24);
        assert_eq!(offset!(M, dl_tensor), 32);
        // The deleter is one nullable function pointer (None is NULL).
        assert_eq!(size_of::<Option<unsafe extern "C" fn(*mut M)>>(), 8);
    }

    #[test]
    fn flags_are_bits_0_and_1() {
        assert_eq!(DLPACK_FLAG_BITMASK_READ_ONLY, 1);
        assert_eq!(DLPACK_FLAG_BITMASK_IS_COPIED, 2);
    }
}
