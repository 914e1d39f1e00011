//! [`StateDict`]: PyTorch's `state_dict`, an ordered map from names to tensors
//! (`dt_state_dict`), and its safetensors files (`dt_safetensors_save` / `_load`).
use crate::error::{check, Error, ErrorCode, Result};
use crate::nn::path_arg;
use crate::{check_version, read_string, Device, Tensor};
use devtensor_sys as ffi;
use std::borrow::Borrow;
use std::ffi::CString;
use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

/// An ordered map from names to tensors, as PyTorch's `state_dict` (`dt_state_dict`):
/// names are unique and keep the order in which they were first inserted; the map holds
/// references to its tensors (shared, not copied). [`Module::state_dict`] gives a
/// module's parameters and buffers by their PyTorch names (`"0.weight"`),
/// [`Module::load_state_dict`] copies one into a module, and [`StateDict::save`] /
/// [`StateDict::load`] write and read safetensors files, so weights saved by PyTorch's
/// `safetensors.torch.save_file(model.state_dict(), path)` load unchanged.
///
/// A `StateDict` owns one reference to the handle; dropping releases it and never panics.
/// `Send + Sync`: it may move to another thread and be read from several at once
/// ([`StateDict::insert`] takes `&mut self`). Like [`Module`] it has no `Clone`, which
/// would read as a copy of the map: [`StateDict::share`] is a second handle to the same
/// map, and `StateDict::from_pairs(sd.entries()?)` a new map of the same tensors.
///
/// ```
/// use devtensor::{DType, Device, StateDict, Tensor};
///
/// # fn main() -> devtensor::Result<()> {
/// let mut sd = StateDict::new()?;
/// sd.insert("weight", &Tensor::from_slice(&[1.0f32, 2.0], &[1, 2], Device::CPU)?)?;
/// sd.insert("bias", &Tensor::zeros(&[1], DType::Float32, Device::CPU)?)?;
/// for entry in &sd {
///     let (name, t) = entry?;
///     println!("{name}: {:?}", t.shape()); // weight: [1, 2], then bias: [1]
/// }
/// assert_eq!(sd.names()?, ["weight", "bias"]);
/// assert_eq!(sd.get("weight")?.unwrap().to_vec::<f32>()?, vec![1.0, 2.0]);
/// # Ok(()) }
/// ```
///
/// [`Module`]: crate::nn::Module
/// [`Module::state_dict`]: crate::nn::Module::state_dict
/// [`Module::load_state_dict`]: crate::nn::Module::load_state_dict
pub struct StateDict {
    ptr: NonNull<ffi::dt_state_dict>,
}

// SAFETY: include/devtensor.h, "state dicts": "A state dict may be used from several
// threads at once: each call sees it before or after a concurrent dt_state_dict_set,
// never in between"; reference counts and handle checks are atomic (THREADING). A
// StateDict is only a handle: moving it to another thread (Send) and calling its `&self`
// methods from several threads (Sync) are uses the header allows; `insert` takes `&mut
// self`, and even through a second handle (`share`) a concurrent insert is one of those
// calls. The tensors it hands out are ordinary `Tensor`s. A reference is released only in
// Drop, which needs ownership.
unsafe impl Send for StateDict {}
unsafe impl Sync for StateDict {}

raw_handle!(
    StateDict,
    "devtensor::StateDict",
    dt_state_dict,
    dt_state_dict_retain,
    dt_state_dict_release,
    "devtensor::StateDict::new()?"
);

impl StateDict {
    /// Wraps a NEW reference written by a C call.
    pub(crate) fn from_out(
        call: impl FnOnce(*mut *mut ffi::dt_state_dict) -> ffi::dt_status,
    ) -> Result<StateDict> {
        check_version()?;
        let mut out: *mut ffi::dt_state_dict = std::ptr::null_mut();
        check(call(&mut out))?;
        NonNull::new(out)
            .map(|ptr| StateDict { ptr })
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Internal,
                    "the library returned success and a NULL state dict",
                )
            })
    }

    fn raw(&self) -> *mut ffi::dt_state_dict {
        self.ptr.as_ptr()
    }

    /// An empty state dict (`dt_state_dict_new`).
    ///
    /// ```
    /// use devtensor::StateDict;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let sd = StateDict::new()?;
    /// assert_eq!(sd.len(), 0);
    /// assert!(sd.is_empty());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::OutOfMemory`]; [`ErrorCode::Version`] when the loaded library is one
    /// these bindings cannot use.
    pub fn new() -> Result<StateDict> {
        StateDict::from_out(|o| unsafe { ffi::dt_state_dict_new(o) })
    }

    /// A state dict of `pairs`, inserted in order (a name given twice keeps its first
    /// position and its last tensor, as [`StateDict::insert`]). Takes what
    /// [`Module::named_parameters`](crate::nn::Module::named_parameters) returns, or
    /// `(&str, &Tensor)` pairs.
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let w = Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU)?;
    /// let b = Tensor::from_slice(&[0.5f32], &[1], Device::CPU)?;
    /// let sd = StateDict::from_pairs([("w", &w), ("b", &b)])?;
    /// assert_eq!(sd.names()?, ["w", "b"]);
    /// assert_eq!(sd.get("b")?.unwrap().to_vec::<f32>()?, vec![0.5]);
    /// // A new map of the same tensors (not copies).
    /// let copy = StateDict::from_pairs(sd.entries()?)?;
    /// assert!(copy.get("w")?.unwrap().shares_storage(&w));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`StateDict::new`] and [`StateDict::insert`]: [`ErrorCode::InvalidArgument`]
    /// for a name holding a NUL byte.
    pub fn from_pairs<I, N, T>(pairs: I) -> Result<StateDict>
    where
        I: IntoIterator<Item = (N, T)>,
        N: AsRef<str>,
        T: Borrow<Tensor>,
    {
        let mut sd = StateDict::new()?;
        for (name, t) in pairs {
            sd.insert(name.as_ref(), t.borrow())?;
        }
        Ok(sd)
    }

    /// The number of entries (`dt_state_dict_count`).
    ///
    /// ```
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut sd = StateDict::new()?;
    /// let t = Tensor::zeros(&[2], DType::Float32, Device::CPU)?;
    /// sd.insert("a", &t)?;
    /// sd.insert("b", &t)?;
    /// sd.insert("a", &t)?; // replaces "a"
    /// assert_eq!(sd.len(), 2);
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        let mut n = 0usize;
        // SAFETY: a live handle we hold; the only errors are NULL and a dead handle.
        let st = unsafe { ffi::dt_state_dict_count(self.raw(), &mut n) };
        debug_assert_eq!(st, ffi::DT_OK);
        n
    }

    /// Whether the state dict has no entry.
    ///
    /// ```
    /// use devtensor::StateDict;
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// assert!(StateDict::new()?.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tensor named `name` (`dt_state_dict_find`): another handle to the tensor the
    /// map holds (the same data, not a copy), or `None` when no entry has that name (a
    /// name holding a NUL byte never has one).
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let t = Tensor::from_slice(&[1i64, 2, 3], &[3], Device::CPU)?;
    /// let sd = StateDict::from_pairs([("t", &t)])?;
    /// assert_eq!(sd.get("t")?.unwrap().to_vec::<i64>()?, vec![1, 2, 3]);
    /// assert!(sd.get("missing")?.is_none());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_state_dict_find` other than
    /// a missing name: [`ErrorCode::InvalidHandle`], which a `StateDict` the safe API
    /// made does not give.
    pub fn get(&self, name: &str) -> Result<Option<Tensor>> {
        let Ok(c) = CString::new(name) else {
            return Ok(None);
        };
        let mut out: *mut ffi::dt_tensor = std::ptr::null_mut();
        // SAFETY: a live handle, a NUL-terminated name, an out-pointer we own.
        let st = unsafe { ffi::dt_state_dict_find(self.raw(), c.as_ptr(), &mut out) };
        if st == ffi::DT_ERR_INVALID_ARGUMENT {
            // With a live handle, a name and an out-pointer, the only invalid argument
            // left is a name no entry has.
            return Ok(None);
        }
        check(st)?;
        Ok(Tensor::from_owned_ptr(out))
    }

    /// Whether an entry is named `name`.
    ///
    /// ```
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut sd = StateDict::new()?;
    /// sd.insert("bias", &Tensor::zeros(&[1], DType::Float32, Device::CPU)?)?;
    /// assert!(sd.contains_key("bias")?);
    /// assert!(!sd.contains_key("weight")?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`StateDict::get`].
    pub fn contains_key(&self, name: &str) -> Result<bool> {
        Ok(self.get(name)?.is_some())
    }

    /// Maps `name` to `tensor` (`dt_state_dict_set`): the map takes its own reference to
    /// the tensor (shared, not copied). A new name is appended; an existing name keeps
    /// its position and now maps to `tensor`.
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut sd = StateDict::new()?;
    /// sd.insert("a", &Tensor::from_slice(&[1.0f32], &[1], Device::CPU)?)?;
    /// sd.insert("b", &Tensor::from_slice(&[2.0f32], &[1], Device::CPU)?)?;
    /// sd.insert("a", &Tensor::from_slice(&[3.0f32], &[1], Device::CPU)?)?;
    /// assert_eq!(sd.names()?, ["a", "b"]); // "a" kept its place
    /// assert_eq!(sd.get("a")?.unwrap().to_vec::<f32>()?, vec![3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`] (a name holding a NUL byte),
    /// [`ErrorCode::OutOfMemory`] (`dt_state_dict_set`).
    pub fn insert(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        let c = CString::new(name).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("state dict name {name:?} holds a NUL byte"),
            )
        })?;
        // SAFETY: live handles, a NUL-terminated name; the map retains the tensor.
        check(unsafe { ffi::dt_state_dict_set(self.raw(), c.as_ptr(), tensor.as_ptr()) })
    }

    /// The name of entry `i` (`dt_state_dict_name`).
    fn name_at(&self, i: usize) -> Result<String> {
        read_string(|b, c, nd| unsafe { ffi::dt_state_dict_name(self.raw(), i, b, c, nd) })
    }

    /// The tensor of entry `i` (`dt_state_dict_get`).
    fn tensor_at(&self, i: usize) -> Result<Tensor> {
        Tensor::from_out(|o| unsafe { ffi::dt_state_dict_get(self.raw(), i, o) })
    }

    /// The names in order.
    ///
    /// ```
    /// use devtensor::nn::Module;
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let lin = Module::linear(3, 2, true, DType::Float32, Device::CPU)?;
    /// assert_eq!(lin.state_dict()?.names()?, ["weight", "bias"]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_state_dict_name`
    /// ([`ErrorCode::OutOfMemory`]).
    pub fn names(&self) -> Result<Vec<String>> {
        (0..self.len()).map(|i| self.name_at(i)).collect()
    }

    /// Every `(name, tensor)` pair in order (the tensors shared with the map), as
    /// [`Module::named_parameters`](crate::nn::Module::named_parameters) returns them.
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let sd = StateDict::from_pairs([
    ///     ("x", Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?),
    ///     ("y", Tensor::from_slice(&[3.0f32], &[1], Device::CPU)?),
    /// ])?;
    /// let sums: Vec<(String, f64)> = sd
    ///     .entries()?
    ///     .into_iter()
    ///     .map(|(n, t)| Ok((n, t.sum_all()?.item()?)))
    ///     .collect::<devtensor::Result<_>>()?;
    /// assert_eq!(sums, [("x".to_string(), 3.0), ("y".to_string(), 3.0)]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`StateDict::iter`]'s items.
    pub fn entries(&self) -> Result<Vec<(String, Tensor)>> {
        self.iter().collect()
    }

    /// The entries in order, as `Result<(name, tensor)>` (`dt_state_dict_name` and
    /// `dt_state_dict_get`; the tensors shared with the map). `&StateDict` is
    /// `IntoIterator` with the same items, so `for e in &sd { let (name, t) = e?; }`
    /// works. The iterator covers the entries there were when it was made (entries are
    /// never removed, so all of them are still there when it reads them).
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let sd = StateDict::from_pairs([
    ///     ("a", Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?),
    ///     ("b", Tensor::from_slice(&[3.0f32, 4.0], &[2], Device::CPU)?),
    /// ])?;
    /// let mut total = 0.0;
    /// for entry in sd.iter() {
    ///     let (_name, t) = entry?;
    ///     total += t.sum_all()?.item()?;
    /// }
    /// assert_eq!(total, 10.0); // 1 + 2 + 3 + 4
    /// # Ok(()) }
    /// ```
    pub fn iter(&self) -> StateDictIter<'_> {
        StateDictIter {
            sd: self,
            next: 0,
            end: self.len(),
        }
    }

    /// Another owning handle to the SAME map (`dt_state_dict_retain`), not a copy: an
    /// insert through one is seen through the other (for a new map of the same tensors,
    /// `StateDict::from_pairs(sd.entries()?)`).
    ///
    /// ```
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let mut sd = StateDict::new()?;
    /// let same = sd.share();
    /// sd.insert("t", &Tensor::zeros(&[1], DType::Float32, Device::CPU)?)?;
    /// assert_eq!(same.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn share(&self) -> StateDict {
        // SAFETY: self holds a reference, so the handle is live; retain cannot fail.
        let st = unsafe { ffi::dt_state_dict_retain(self.raw()) };
        debug_assert_eq!(st, ffi::DT_OK);
        StateDict { ptr: self.ptr }
    }

    /// Writes the map to `path` as a safetensors file (`dt_safetensors_save`): the
    /// tensors in order, each as contiguous little-endian bytes whatever its device and
    /// strides. The file is written under a temporary name and renamed onto `path`, so a
    /// failed save leaves no partial file.
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let path = std::env::temp_dir().join(format!("devtensor-doc-sd-save-{}.safetensors", std::process::id()));
    /// let sd = StateDict::from_pairs([("t", Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU)?)])?;
    /// sd.save(&path)?;
    /// // 8 bytes of length, the JSON header, then the two floats' 8 bytes.
    /// let bytes = std::fs::read(&path).unwrap();
    /// let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    /// assert_eq!(bytes.len(), 8 + header_len + 8);
    /// assert_eq!(&bytes[8 + header_len..], [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat());
    /// std::fs::remove_file(&path).unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_safetensors_save`:
    /// [`ErrorCode::Io`] (the file cannot be created or written; the message has the
    /// path and the system's reason), [`ErrorCode::InvalidArgument`] (an empty path, a
    /// path that is not UTF-8 or holds a NUL byte, an entry named `"__metadata__"`),
    /// [`ErrorCode::OutOfMemory`], and the errors of copying a device tensor to the host.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let p = path_arg(path.as_ref())?;
        check(unsafe { ffi::dt_safetensors_save(self.raw(), p.as_ptr()) })
    }

    /// Reads the safetensors file at `path` (written by [`StateDict::save`],
    /// [`Module::save`](crate::nn::Module::save) or PyTorch's `safetensors`) into a new
    /// state dict whose tensors are on the process default device
    /// ([`Device::default_device`], initially `cpu:0`), in the file's order. The whole
    /// file is checked before any tensor is made.
    ///
    /// ```
    /// use devtensor::{DType, Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let path = std::env::temp_dir().join(format!("devtensor-doc-sd-load-{}.safetensors", std::process::id()));
    /// let w = Tensor::from_slice(&[1.5f64, -2.0, 0.25], &[3, 1], Device::CPU)?;
    /// StateDict::from_pairs([("w", &w)])?.save(&path)?;
    /// let back = StateDict::load(&path)?;
    /// let t = back.get("w")?.unwrap();
    /// assert_eq!((t.shape(), t.dtype()), (vec![3, 1], DType::Float64));
    /// assert_eq!(t.to_vec::<f64>()?, vec![1.5, -2.0, 0.25]);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_safetensors_load`:
    /// [`ErrorCode::Io`] (no such file, or not a regular file), [`ErrorCode::Format`]
    /// (the file breaks the format; the message names the file and what is wrong),
    /// [`ErrorCode::NotSupported`] (a dtype devtensor lacks), [`ErrorCode::InvalidArgument`]
    /// (an empty path, a path that is not UTF-8 or holds a NUL byte),
    /// [`ErrorCode::OutOfMemory`]; [`ErrorCode::Version`] when the loaded library is one
    /// these bindings cannot use.
    pub fn load(path: impl AsRef<Path>) -> Result<StateDict> {
        StateDict::load_raw(
            path.as_ref(),
            Device::raw_or_default(None),
        )
    }

    /// [`StateDict::load`] onto `device`: on a CPU device the tensors share a private
    /// mapping of the file (writes to them never reach the file); on another device the
    /// data is copied there.
    ///
    /// ```
    /// use devtensor::{Device, StateDict, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let path = std::env::temp_dir().join(format!("devtensor-doc-sd-load-to-{}.safetensors", std::process::id()));
    /// StateDict::from_pairs([("b", Tensor::from_slice(&[7i32, 8], &[2], Device::CPU)?)])?.save(&path)?;
    /// let dev = Device::cuda_if_available();
    /// let t = StateDict::load_to(&path, dev)?.get("b")?.unwrap();
    /// assert_eq!(t.device(), dev);
    /// assert_eq!(t.to(Device::CPU)?.to_vec::<i32>()?, vec![7, 8]);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`StateDict::load`], and [`ErrorCode::InvalidDevice`] /
    /// [`ErrorCode::DeviceUnavailable`] for a device that does not exist or cannot be
    /// used.
    pub fn load_to(path: impl AsRef<Path>, device: Device) -> Result<StateDict> {
        StateDict::load_raw(path.as_ref(), device.to_raw())
    }

    fn load_raw(path: &Path, device: ffi::dt_device) -> Result<StateDict> {
        let p = path_arg(path)?;
        StateDict::from_out(|o| unsafe { ffi::dt_safetensors_load(p.as_ptr(), device, o) })
    }
}

/// The iterator of [`StateDict::iter`]: `Result<(name, tensor)>` per entry, in order.
#[derive(Debug)]
pub struct StateDictIter<'a> {
    sd: &'a StateDict,
    next: usize,
    end: usize,
}

impl Iterator for StateDictIter<'_> {
    type Item = Result<(String, Tensor)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(
            self.sd
                .name_at(i)
                .and_then(|name| Ok((name, self.sd.tensor_at(i)?))),
        )
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for StateDictIter<'_> {}

impl<'a> IntoIterator for &'a StateDict {
    type Item = Result<(String, Tensor)>;
    type IntoIter = StateDictIter<'a>;

    fn into_iter(self) -> StateDictIter<'a> {
        self.iter()
    }
}

impl Drop for StateDict {
    fn drop(&mut self) {
        // SAFETY: we own one reference. Never panics.
        let _ = unsafe { ffi::dt_state_dict_release(self.raw()) };
    }
}

impl fmt::Debug for StateDict {
    /// The names with each tensor's shape, dtype and device (no data is read):
    /// `{"weight": Tensor[[2, 3], float32, cpu:0], ...}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for e in self.iter() {
            match e {
                Ok((name, t)) => m.entry(&name, &t),
                Err(e) => m.entry(&"<error>", &e.message),
            };
        }
        m.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;
    use crate::DType;

    #[test]
    fn insert_get_iterate_and_release() {
        leak_checked(|| {
            let a = Tensor::from_slice(&[1.0f32, 2.0], &[2], Device::CPU).unwrap();
            let mut sd = StateDict::new().unwrap();
            sd.insert("a", &a).unwrap();
            sd.insert("b", &Tensor::zeros(&[3], DType::Int64, Device::CPU).unwrap())
                .unwrap();
            assert_eq!(sd.iter().len(), 2);
            let got = sd.get("a").unwrap().unwrap();
            assert!(got.shares_storage(&a), "get copied the tensor");
            let e = sd.insert("bad\0name", &a).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
            assert!(sd.get("bad\0name").unwrap().is_none());
            let dbg = format!("{sd:?}");
            assert!(dbg.starts_with("{\"a\": ") && dbg.contains("\"b\": "), "{dbg}");
        });
    }
}
