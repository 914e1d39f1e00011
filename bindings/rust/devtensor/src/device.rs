//! Devices as values: `Device::Cpu(0)` is `cpu:0`, `Device::Cuda(1)` is `cuda:1`.
use crate::error::{check, Error, ErrorCode, Result};
use crate::{check_version, read_string};
use devtensor_sys as ffi;
use std::ffi::{CStr, CString};
use std::fmt;
use std::str::FromStr;

/// A device: a CPU device or a CUDA GPU, by logical ordinal.
///
/// `Cpu` carries an index, like `Cuda`, instead of being a bare `Cpu` (as in tch) plus
/// some `CpuN(u32)` for the others: devtensor has several *logical* CPU devices
/// (`DEVTENSOR_CPU_DEVICES=N` gives `cpu:0` … `cpu:N-1`, as JAX does, so device-mismatch
/// rules and data parallelism are tested for real without a GPU), and they are devices
/// like any other — `cpu:0 + cpu:1` is a device mismatch. With one variant per device
/// type every device has exactly one value, so `==` and `Hash` agree with the C value
/// (a separate `Cpu` and `CpuN(0)` would be two spellings of `cpu:0`), and `Cpu(_)`
/// matches every CPU device. [`Device::CPU`] is the usual `cpu:0`.
///
/// Parse and print as PyTorch does: `"cpu"`, `"cpu:1"`, `"cuda"` (= `cuda:0`), `"cuda:1"`.
///
/// ```
/// use devtensor::Device;
/// let d: Device = "cuda:1".parse().unwrap();
/// assert_eq!(d, Device::Cuda(1));
/// assert_eq!(d.to_string(), "cuda:1");
/// assert_eq!("cpu".parse::<Device>().unwrap(), Device::CPU);
/// assert!("gpu".parse::<Device>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Device {
    /// A CPU device: `cpu:0` is the host; `cpu:1`… exist with `DEVTENSOR_CPU_DEVICES`.
    Cpu(u32),
    /// A CUDA GPU, by logical ordinal (after `CUDA_VISIBLE_DEVICES`).
    Cuda(u32),
}

/// A device type, for [`Device::count`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// CPU devices (1, or `DEVTENSOR_CPU_DEVICES`).
    Cpu,
    /// CUDA GPUs.
    Cuda,
}

/// What `Device::properties` reports (`dt_device_props`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// The device described.
    pub device: Device,
    /// CPU model or GPU name.
    pub name: String,
    /// Total memory in bytes.
    pub total_memory: u64,
    /// Free memory in bytes at the time of the call.
    pub free_memory: u64,
    /// CUDA compute capability (major, minor); (0, 0) for a CPU.
    pub compute_capability: (i32, i32),
    /// CUDA: multiprocessors; CPU: logical cores.
    pub multiprocessor_count: i32,
    /// CUDA: the ordinal before `CUDA_VISIBLE_DEVICES`; CPU: the index.
    pub physical_index: i32,
    /// CUDA: `"GPU-xxxxxxxx-..."`; CPU: `""`.
    pub uuid: String,
    /// CUDA: `"0000:3b:00.0"`; CPU: `""`.
    pub pci_bus_id: String,
}

/// A device allocator's statistics, from [`Device::memory_stats`] (`dt_mem_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemoryStats {
    /// Bytes in live tensor storage.
    pub allocated_bytes: u64,
    /// Bytes held by the allocator: live and cached.
    pub reserved_bytes: u64,
    /// The most `allocated_bytes` has been since the process started.
    pub peak_allocated_bytes: u64,
    /// Storage allocations served since the process started.
    pub allocation_count: u64,
    /// Those of them that went to the operating system or the driver.
    pub system_allocation_count: u64,
}

fn cstr_field(buf: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Device {
    /// `cpu:0`, the host.
    pub const CPU: Device = Device::Cpu(0);

    /// The C ABI's form of an optional device: `None` is `DT_DEVICE_DEFAULT`, the process
    /// default for a constructor and "unchanged" for `dt_tensor_to`.
    pub(crate) fn raw_or_default(device: Option<Device>) -> ffi::dt_device {
        device.map_or(
            ffi::dt_device {
                type_: ffi::DT_DEVICE_DEFAULT,
                index: 0,
            },
            Device::to_raw,
        )
    }

    pub(crate) fn to_raw(self) -> ffi::dt_device {
        match self {
            Device::Cpu(i) => ffi::dt_device {
                type_: ffi::DT_DEVICE_CPU,
                index: i as i32,
            },
            Device::Cuda(i) => ffi::dt_device {
                type_: ffi::DT_DEVICE_CUDA,
                index: i as i32,
            },
        }
    }

    pub(crate) fn from_raw(d: ffi::dt_device) -> Result<Device> {
        match (d.type_, u32::try_from(d.index)) {
            (ffi::DT_DEVICE_CPU, Ok(i)) => Ok(Device::Cpu(i)),
            (ffi::DT_DEVICE_CUDA, Ok(i)) => Ok(Device::Cuda(i)),
            _ => Err(Error::new(
                ErrorCode::InvalidDevice,
                format!(
                    "unknown device {{type {}, index {}}} from the library",
                    d.type_, d.index
                ),
            )),
        }
    }

    /// The kind of device.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// use devtensor::DeviceKind;
    /// assert_eq!(Device::Cuda(1).kind(), DeviceKind::Cuda);
    /// assert_eq!(Device::CPU.kind(), DeviceKind::Cpu);
    /// # Ok(()) }
    /// ```
    pub fn kind(self) -> DeviceKind {
        match self {
            Device::Cpu(_) => DeviceKind::Cpu,
            Device::Cuda(_) => DeviceKind::Cuda,
        }
    }

    /// The ordinal within its kind.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(Device::Cuda(1).index(), 1);
    /// assert_eq!("cpu".parse::<Device>()?.index(), 0);
    /// # Ok(()) }
    /// ```
    pub fn index(self) -> u32 {
        match self {
            Device::Cpu(i) | Device::Cuda(i) => i,
        }
    }

    /// `true` for a CUDA device.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert!(Device::Cuda(0).is_cuda() && !Device::CPU.is_cuda());
    /// # Ok(()) }
    /// ```
    pub fn is_cuda(self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    /// `cuda:0` when a CUDA device can be used, else `cpu:0` (tch's
    /// `Device::cuda_if_available`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let dev = Device::cuda_if_available();
    /// assert_eq!(dev.is_cuda(), Device::cuda_is_available());
    /// # Ok(()) }
    /// ```
    pub fn cuda_if_available() -> Device {
        if Device::cuda_is_available() {
            Device::Cuda(0)
        } else {
            Device::CPU
        }
    }

    /// Whether at least one CUDA device can be used (`dt_cuda_is_available`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// if !Device::cuda_is_available() {
    ///     let (usable, why) = Device::cuda_status()?;
    ///     assert!(!usable && !why.is_empty());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn cuda_is_available() -> bool {
        check_version().is_ok() && unsafe { ffi::dt_cuda_is_available() } == 1
    }

    /// Why CUDA can or cannot be used: `(true, "...")` when it can, else `(false,
    /// reason)` — not built, plugin missing, no driver, no device, all hidden
    /// (`dt_cuda_status`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let (usable, why) = Device::cuda_status()?;
    /// assert_eq!(usable, Device::cuda_is_available());
    /// println!("CUDA: {why}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_cuda_status`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn cuda_status() -> Result<(bool, String)> {
        check_version()?;
        let mut state = 0i32;
        let text = read_string(|b, c, n| unsafe { ffi::dt_cuda_status(&mut state, b, c, n) })?;
        Ok((state == ffi::DT_CUDA_AVAILABLE, text))
    }

    /// `cuda:i` if that GPU exists, else `cpu:0` (d2l's `try_gpu`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let dev = Device::try_gpu(0); // cuda:0, or cpu:0 without it
    /// assert!(dev == Device::Cuda(0) || dev == Device::CPU);
    /// let far = Device::try_gpu(1000);
    /// assert_eq!(far, Device::CPU);
    /// # Ok(()) }
    /// ```
    pub fn try_gpu(i: u32) -> Device {
        let mut d = Device::CPU.to_raw();
        if check_version().is_ok()
            && i32::try_from(i).is_ok()
            && unsafe { ffi::dt_try_gpu(i as i32, &mut d) } == ffi::DT_OK
        {
            Device::from_raw(d).unwrap_or(Device::CPU)
        } else {
            Device::CPU
        }
    }

    /// Every usable GPU, or `[cpu:0]` when there is none (d2l's `try_all_gpus`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let gpus = Device::all_gpus()?;
    /// assert!(!gpus.is_empty()); // [cpu:0] without a GPU
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_all_gpus`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn all_gpus() -> Result<Vec<Device>> {
        check_version()?;
        device_list(|o, c, n| unsafe { ffi::dt_all_gpus(o, c, n) })
    }

    /// Every usable GPU ordered by free memory, most free first, or `[cpu:0]`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let best = Device::by_free_memory()?[0];
    /// let t = Tensor::zeros(&[2], DType::Float32, best)?;
    /// assert_eq!(t.device(), best);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_devices_by_free_memory`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn by_free_memory() -> Result<Vec<Device>> {
        check_version()?;
        device_list(|o, c, n| unsafe { ffi::dt_devices_by_free_memory(o, c, n) })
    }

    /// The number of devices of a kind (`dt_device_count`); 0 CUDA devices without CUDA.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// use devtensor::DeviceKind;
    /// assert!(Device::count(DeviceKind::Cpu)? >= 1);
    /// assert_eq!(Device::count(DeviceKind::Cuda)? > 0, Device::cuda_is_available());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_device_count`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn count(kind: DeviceKind) -> Result<usize> {
        check_version()?;
        let t = match kind {
            DeviceKind::Cpu => ffi::DT_DEVICE_CPU,
            DeviceKind::Cuda => ffi::DT_DEVICE_CUDA,
        };
        let mut n = 0usize;
        check(unsafe { ffi::dt_device_count(t, &mut n) })?;
        Ok(n)
    }

    /// The process-wide default device (`dt_default_device`), initially `cpu:0`.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// assert_eq!(Device::default_device()?, Device::CPU);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_default_device`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn default_device() -> Result<Device> {
        check_version()?;
        let mut d = Device::CPU.to_raw();
        check(unsafe { ffi::dt_default_device(&mut d) })?;
        Device::from_raw(d)
    }

    /// Sets the process-wide default device (`dt_set_default_device`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// Device::CPU.set_default()?;
    /// assert_eq!(Device::default_device()?, Device::CPU);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_set_default_device`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn set_default(self) -> Result<()> {
        check_version()?;
        check(unsafe { ffi::dt_set_default_device(self.to_raw()) })
    }

    /// CPU model or GPU name. Fails with `InvalidDevice` / `DeviceUnavailable` for a
    /// device that does not exist or cannot be used.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let n = Device::CPU.name()?; // the CPU model
    /// assert!(!n.is_empty());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_device_name`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn name(self) -> Result<String> {
        check_version()?;
        read_string(|b, c, n| unsafe { ffi::dt_device_name(self.to_raw(), b, c, n) })
    }

    /// `(free, total)` memory in bytes (for CPU devices, the system's).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let (free, total) = Device::CPU.memory()?;
    /// assert!(free <= total && total > 0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_device_memory`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn memory(self) -> Result<(u64, u64)> {
        check_version()?;
        let (mut free, mut total) = (0u64, 0u64);
        check(unsafe { ffi::dt_device_memory(self.to_raw(), &mut free, &mut total) })?;
        Ok((free, total))
    }

    /// Name, memory, compute capability, UUID, PCI bus id (`dt_device_properties`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let p = Device::CPU.properties()?;
    /// assert!(p.total_memory > 0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_device_properties`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn properties(self) -> Result<DeviceProperties> {
        check_version()?;
        // SAFETY: a plain C struct of integers and char arrays; all-zero is valid.
        let mut p: ffi::dt_device_props = unsafe { std::mem::zeroed() };
        p.struct_size = std::mem::size_of::<ffi::dt_device_props>();
        check(unsafe { ffi::dt_device_properties(self.to_raw(), &mut p) })?;
        Ok(DeviceProperties {
            device: Device::from_raw(p.device)?,
            name: cstr_field(&p.name),
            total_memory: p.total_memory,
            free_memory: p.free_memory,
            compute_capability: (p.compute_capability_major, p.compute_capability_minor),
            multiprocessor_count: p.multiprocessor_count,
            physical_index: p.physical_index,
            uuid: cstr_field(&p.uuid),
            pci_bus_id: cstr_field(&p.pci_bus_id),
        })
    }

    /// The allocator's statistics for this device (`dt_memory_stats`). Fails with
    /// `InvalidDevice` / `DeviceUnavailable` for a device that does not exist or cannot
    /// be used.
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let before = Device::CPU.memory_stats()?.allocated_bytes;
    /// let t = Tensor::zeros(&[1024], DType::Float32, Device::CPU)?;
    /// assert!(Device::CPU.memory_stats()?.allocated_bytes >= before + 4096);
    /// drop(t);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_memory_stats`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn memory_stats(self) -> Result<MemoryStats> {
        check_version()?;
        // SAFETY: a plain C struct of integers; all-zero is valid.
        let mut s: ffi::dt_mem_stats = unsafe { std::mem::zeroed() };
        s.struct_size = std::mem::size_of::<ffi::dt_mem_stats>();
        check(unsafe { ffi::dt_memory_stats(self.to_raw(), &mut s) })?;
        Ok(MemoryStats {
            allocated_bytes: s.allocated_bytes,
            reserved_bytes: s.reserved_bytes,
            peak_allocated_bytes: s.peak_allocated_bytes,
            allocation_count: s.allocation_count,
            system_allocation_count: s.system_allocation_count,
        })
    }

    /// Returns the allocator's cached, unused blocks on this device to the system
    /// (`dt_empty_cache`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// Device::CPU.empty_cache()?; // frees what the allocator holds and no tensor uses
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_empty_cache`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn empty_cache(self) -> Result<()> {
        check_version()?;
        check(unsafe { ffi::dt_empty_cache(self.to_raw()) })
    }

    /// Waits for all work queued on the device (`dt_synchronize`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// let dev = Device::cuda_if_available();
    /// let t = Tensor::ones(&[4], DType::Float32, dev)?;
    /// let _u = (&t * 2.0)?; // queued on a GPU
    /// dev.synchronize()?;   // finished
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_synchronize`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn synchronize(self) -> Result<()> {
        check_version()?;
        check(unsafe { ffi::dt_synchronize(self.to_raw()) })
    }

    /// Seeds this device's random generator (`dt_device_manual_seed`).
    ///
    /// ```
    /// # use devtensor::{DType, Device, ErrorCode, Tensor};
    /// # fn main() -> devtensor::Result<()> {
    /// Device::CPU.manual_seed(7)?;
    /// let a = Tensor::rand(&[2], DType::Float32, Device::CPU)?;
    /// Device::CPU.manual_seed(7)?;
    /// let b = Tensor::rand(&[2], DType::Float32, Device::CPU)?;
    /// assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The errors that `include/devtensor.h` lists for `dt_device_manual_seed`: an
    /// [`Error`](crate::Error) with the library's code and message.
    /// [`ErrorCode::Version`](crate::ErrorCode::Version) when the loaded library is one
    /// these bindings cannot use.
    pub fn manual_seed(self, seed: u64) -> Result<()> {
        check_version()?;
        check(unsafe { ffi::dt_device_manual_seed(self.to_raw(), seed) })
    }
}

fn device_list(
    call: impl Fn(*mut ffi::dt_device, usize, *mut usize) -> ffi::dt_status,
) -> Result<Vec<Device>> {
    loop {
        let mut n = 0usize;
        check(call(std::ptr::null_mut(), 0, &mut n))?;
        let mut v = vec![Device::CPU.to_raw(); n];
        let mut m = 0usize;
        check(call(v.as_mut_ptr(), v.len(), &mut m))?;
        if m <= n {
            v.truncate(m);
            return v.into_iter().map(Device::from_raw).collect();
        }
        // A device appeared between the calls: ask again.
    }
}

impl Default for Device {
    /// `cpu:0`.
    fn default() -> Device {
        Device::CPU
    }
}

impl fmt::Display for Device {
    /// `cpu:0`, `cuda:1` (`dt_device_format`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0 as std::os::raw::c_char; 32];
        let mut needed = 0usize;
        // SAFETY: buf is 32 bytes; the string protocol never writes more than cap.
        let st = unsafe {
            ffi::dt_device_format(self.to_raw(), buf.as_mut_ptr(), buf.len(), &mut needed)
        };
        if st == ffi::DT_OK && needed <= buf.len() {
            // SAFETY: NUL-terminated within buf on success.
            f.write_str(&unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy())
        } else {
            match self {
                Device::Cpu(i) => write!(f, "cpu:{i}"),
                Device::Cuda(i) => write!(f, "cuda:{i}"),
            }
        }
    }
}

impl FromStr for Device {
    type Err = Error;
    /// `"cpu"`, `"cpu:1"`, `"cuda"`, `"cuda:1"` (`dt_device_parse`).
    fn from_str(s: &str) -> Result<Device> {
        check_version()?;
        let c = CString::new(s).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("invalid device string {s:?}: NUL byte"),
            )
        })?;
        let mut d = Device::CPU.to_raw();
        check(unsafe { ffi::dt_device_parse(c.as_ptr(), &mut d) })?;
        Device::from_raw(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::leak_checked;
    use crate::{DType, Tensor};

    #[test]
    fn parse_display_roundtrip() {
        leak_checked(|| {
            for (text, dev, shown) in [
                ("cpu", Device::CPU, "cpu:0"),
                ("cpu:1", Device::Cpu(1), "cpu:1"),
                ("cuda", Device::Cuda(0), "cuda:0"),
                ("cuda:1", Device::Cuda(1), "cuda:1"),
            ] {
                let d: Device = text.parse().unwrap();
                assert_eq!(d, dev, "{text}");
                assert_eq!(d.to_string(), shown);
                assert_eq!(d.to_string().parse::<Device>().unwrap(), d);
            }
            for bad in ["gpu", "cuda:-1", "", "cpu:x", "cu\0da"] {
                let e = bad.parse::<Device>().unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad:?}: {e}");
                assert!(!e.message.is_empty());
            }
        });
    }

    #[test]
    fn handles_kinds_and_queries() {
        leak_checked(|| {
            assert_eq!(Device::CPU.kind(), DeviceKind::Cpu);
            assert_eq!(Device::Cuda(3).index(), 3);
            assert!(Device::count(DeviceKind::Cpu).unwrap() >= 1);
            let gpus = Device::all_gpus().unwrap();
            let best = Device::cuda_if_available();
            if Device::cuda_is_available() {
                assert_eq!(best, Device::Cuda(0));
                assert_eq!(gpus.len(), Device::count(DeviceKind::Cuda).unwrap());
                assert_eq!(Device::try_gpu(0), Device::Cuda(0));
            } else {
                assert_eq!(best, Device::CPU);
                assert_eq!(gpus, vec![Device::CPU]);
                assert_eq!(Device::try_gpu(0), Device::CPU);
                assert_eq!(Device::count(DeviceKind::Cuda).unwrap(), 0);
                let (ok, why) = Device::cuda_status().unwrap();
                assert!(!ok && !why.is_empty());
            }
            assert_eq!(Device::try_gpu(1000), Device::CPU);
            assert!(!Device::CPU.name().unwrap().is_empty());
            let (free, total) = Device::CPU.memory().unwrap();
            assert!(total > 0 && free <= total);
            let p = Device::CPU.properties().unwrap();
            assert_eq!(p.device, Device::CPU);
            assert!(p.multiprocessor_count >= 1);
            assert_eq!(Device::by_free_memory().unwrap()[0], best);
            assert_eq!(Device::default_device().unwrap(), Device::CPU);
            assert_eq!(
                Device::Cpu(99).name().unwrap_err().code,
                ErrorCode::InvalidDevice
            );
        });
    }

    #[test]
    fn memory_stats_and_empty_cache() {
        leak_checked(|| {
            let before = Device::CPU.memory_stats().unwrap();
            let t = Tensor::zeros(&[1024], DType::Float32, Device::CPU).unwrap();
            let during = Device::CPU.memory_stats().unwrap();
            assert!(
                during.allocation_count > before.allocation_count,
                "{before:?} -> {during:?}"
            );
            assert!(
                during.allocated_bytes >= before.allocated_bytes + 4096,
                "{before:?} -> {during:?}"
            );
            assert!(during.peak_allocated_bytes >= during.allocated_bytes);
            assert!(during.reserved_bytes >= during.allocated_bytes);
            assert!(during.system_allocation_count <= during.allocation_count);
            drop(t);
            Device::CPU.empty_cache().unwrap();
            let after = Device::CPU.memory_stats().unwrap();
            assert!(
                after.allocated_bytes < during.allocated_bytes,
                "{during:?} -> {after:?}"
            );
            assert!(
                after.reserved_bytes <= during.reserved_bytes,
                "{during:?} -> {after:?}"
            );
            assert_eq!(
                Device::Cpu(99).memory_stats().unwrap_err().code,
                ErrorCode::InvalidDevice
            );
            if !Device::cuda_is_available() {
                assert_eq!(
                    Device::Cuda(0).empty_cache().unwrap_err().code,
                    ErrorCode::DeviceUnavailable
                );
            }
        });
    }
}
