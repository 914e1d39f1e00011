//! The module tree: a module's kind ([`Module::kind`]) and its children
//! ([`Module::children`], [`Module::child`]), as PyTorch's `type(m).__name__`,
//! `named_children()` and `net[2][1]` / `net.features[0]`.

use super::{new_module, Module};
use crate::error::{check, Error, ErrorCode, Result};
use crate::read_string;
use devtensor_sys as ffi;
use std::ffi::CString;

impl Module {
    /// The module's kind, PyTorch's class name (`dt_module_kind`): `"Linear"`,
    /// `"Sequential"`, `"BatchNorm2d"`, `"ReLU"`, ...
    ///
    /// ```
    /// use devtensor::nn::{BatchNorm2d, Module};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(Module::relu()?.kind()?, "ReLU");
    /// assert_eq!(BatchNorm2d::new(8).build()?.kind()?, "BatchNorm2d");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_kind`: an [`Error`] with
    /// the library's code and message (`InvalidHandle`).
    pub fn kind(&self) -> Result<String> {
        read_string(|b, c, n| unsafe { ffi::dt_module_kind(self.raw(), b, c, n) })
    }

    /// The direct children in order with their names, as PyTorch's `named_children()`
    /// (`dt_module_child_count`, `dt_module_child_at`): a [`Sequential`](super::Sequential)'s
    /// are `"0"`, `"1"`, ..., the middle parts of the state_dict keys (`"1.weight"` is
    /// parameter `"weight"` of child `"1"`); a `Linear` has none.
    ///
    /// Each child is the SAME module as the parent's part, not a copy: a new owning handle
    /// to it (as [`Module::share`] is to the module itself), so its parameters are the
    /// parent's, and [`to`](Module::to), [`load`](Module::load),
    /// [`train`](Module::train) or [`eval`](Module::eval) through it change the parent,
    /// although the parent is only borrowed here (the header makes every module call safe
    /// against every other; see [`nn`](crate::nn)'s THREADING). It stays valid after the
    /// parent is dropped.
    ///
    /// ```
    /// use devtensor::nn::{BatchNorm1d, Module, Sequential};
    /// use devtensor::{DType, Device};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let net = Sequential::new()
    ///     .add(Module::linear(4, 3, true, DType::Float32, Device::CPU)?)
    ///     .add(BatchNorm1d::new(3).build()?)
    ///     .build()?;
    /// let children = net.children()?;
    /// let names: Vec<&str> = children.iter().map(|(n, _)| n.as_str()).collect();
    /// assert_eq!(names, ["0", "1"]);
    /// assert_eq!(children[1].1.kind()?, "BatchNorm1d");
    /// // The parent's own weight, not a copy.
    /// assert!(children[0].1.parameters()?[0].shares_storage(&net.parameters()?[0]));
    /// assert!(children[0].1.children()?.is_empty());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_module_child_count` and
    /// `dt_module_child_at`: an [`Error`] with the library's code and message
    /// (`InvalidHandle`).
    pub fn children(&self) -> Result<Vec<(String, Module)>> {
        let mut n = 0usize;
        check(unsafe { ffi::dt_module_child_count(self.raw(), &mut n) })?;
        (0..n)
            .map(|i| {
                let name = read_string(|b, c, nd| unsafe {
                    ffi::dt_module_child_at(self.raw(), i, b, c, nd, std::ptr::null_mut())
                })?;
                let child = new_module(|o| unsafe {
                    ffi::dt_module_child_at(
                        self.raw(),
                        i,
                        std::ptr::null_mut(),
                        0,
                        std::ptr::null_mut(),
                        o,
                    )
                })?;
                Ok((name, child))
            })
            .collect()
    }

    /// The descendant at a dotted path (`dt_module_child`): `"2"` is PyTorch's `net[2]`,
    /// `"features.0"` `net.features[0]`, `"2.1"` `net[2][1]`. As for
    /// [`children`](Module::children), it is a new owning handle to the SAME module (not
    /// a copy): moves, loads and training steps through it change the parent, and it
    /// stays valid after the parent is dropped.
    ///
    /// ```
    /// use devtensor::nn::{BatchNorm1d, Module, Sequential};
    /// use devtensor::{DType, Device, ErrorCode, Tensor};
    ///
    /// # fn main() -> devtensor::Result<()> {
    /// let net = Sequential::new()
    ///     .add(Module::linear(2, 2, true, DType::Float32, Device::CPU)?)
    ///     .add(BatchNorm1d::new(2).build()?)
    ///     .build()?;
    /// let bn = net.child("1")?;
    /// // A training step through the child updates the parent's buffers:
    /// // a feature holding 0 and 2 has mean 1, so running_mean = 0.9 * 0 + 0.1 * 1.
    /// bn.forward(&Tensor::from_slice(&[0.0f32, 0.0, 2.0, 2.0], &[2, 2], Device::CPU)?)?;
    /// let rm = net.state_dict()?.get("1.running_mean")?.unwrap().to_vec::<f32>()?;
    /// assert!((rm[0] - 0.1).abs() < 1e-6);
    /// let e = net.child("5").unwrap_err();
    /// assert_eq!(e.code, ErrorCode::InvalidArgument);
    /// assert!(e.message.contains("Sequential's children: 0, 1"), "{}", e.message);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidArgument`]: no such child (the message names the missing part
    /// and the children there are, e.g. `no child "5" on the path "2.5" (Sequential's
    /// children: 0, 1)`), a path holding a NUL byte; `InvalidHandle`, `OutOfMemory`
    /// (`dt_module_child`).
    pub fn child(&self, path: &str) -> Result<Module> {
        let p = CString::new(path).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("module path {path:?} holds a NUL byte"),
            )
        })?;
        new_module(|o| unsafe { ffi::dt_module_child(self.raw(), p.as_ptr(), o) })
    }
}
