//! StateDict (dt_state_dict_*, dt_safetensors_save/load, dt_module_state_dict,
//! dt_module_load_state_dict): round trips through a file with hand-written values, a
//! second Linear loaded from the first computing the same output, and the errors the C
//! API gives (a wrong shape, a missing or unexpected key, bad files). Each test runs
//! alone and checks that it leaves no handle behind.
use devtensor::nn::{Module, Sequential, Sgd};
use devtensor::{DType, Device, ErrorCode, StateDict, Tensor};
use std::path::PathBuf;

mod common;
use common::leak_checked;

/// A path in the temp directory, removed when dropped.
struct TempPath(PathBuf);
impl TempPath {
    fn new(name: &str) -> TempPath {
        TempPath(std::env::temp_dir().join(format!(
            "devtensor-rs-sd-{}-{name}.safetensors",
            std::process::id()
        )))
    }
}
impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Linear(2, 2) with weight [[1, 2], [3, 4]] and bias [0.5, -0.5].
fn known_linear() -> Module {
    let mut lin = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
    let sd = StateDict::from_pairs([
        (
            "weight",
            Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], Device::CPU).unwrap(),
        ),
        (
            "bias",
            Tensor::from_slice(&[0.5f32, -0.5], &[2], Device::CPU).unwrap(),
        ),
    ])
    .unwrap();
    lin.load_state_dict(&sd).unwrap();
    lin
}

#[test]
fn round_trip_through_a_file_keeps_names_order_dtypes_and_values() {
    leak_checked(|| {
        let path = TempPath::new("round-trip");
        let mut sd = StateDict::new().unwrap();
        sd.insert(
            "layer.weight",
            &Tensor::from_slice(&[1.5f32, -2.0, 0.25, 8.0, 0.0, -0.125], &[2, 3], Device::CPU)
                .unwrap(),
        )
        .unwrap();
        sd.insert(
            "step",
            &Tensor::from_slice(&[7i64], &[], Device::CPU).unwrap(),
        )
        .unwrap();
        sd.insert(
            "mask",
            &Tensor::from_slice(&[true, false, true], &[3], Device::CPU).unwrap(),
        )
        .unwrap();
        sd.insert(
            "a.double",
            &Tensor::from_slice(&[0.1f64, 1e300], &[2, 1], Device::CPU).unwrap(),
        )
        .unwrap();
        // A transposed (non-contiguous) tensor is written row-major as it reads.
        let t = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3], Device::CPU)
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        sd.insert("transposed", &t).unwrap();
        sd.save(&path.0).unwrap();

        let back = StateDict::load(&path.0).unwrap();
        assert_eq!(
            back.names().unwrap(),
            ["layer.weight", "step", "mask", "a.double", "transposed"]
        );
        let w = back.get("layer.weight").unwrap().unwrap();
        assert_eq!((w.shape(), w.dtype()), (vec![2, 3], DType::Float32));
        assert_eq!(
            w.to_vec::<f32>().unwrap(),
            vec![1.5, -2.0, 0.25, 8.0, 0.0, -0.125]
        );
        let s = back.get("step").unwrap().unwrap();
        assert_eq!((s.shape(), s.to_vec::<i64>().unwrap()), (vec![], vec![7]));
        assert_eq!(
            back.get("mask").unwrap().unwrap().to_vec::<bool>().unwrap(),
            vec![true, false, true]
        );
        assert_eq!(
            back.get("a.double").unwrap().unwrap().to_vec::<f64>().unwrap(),
            vec![0.1, 1e300]
        );
        let tr = back.get("transposed").unwrap().unwrap();
        assert_eq!(tr.shape(), vec![3, 2]);
        assert_eq!(tr.to_vec::<i32>().unwrap(), vec![1, 4, 2, 5, 3, 6]);

        // Iteration gives the same pairs in the same order.
        let pairs: Vec<(String, Vec<i64>)> = back
            .iter()
            .map(|e| e.map(|(n, t)| (n, t.shape())))
            .collect::<devtensor::Result<_>>()
            .unwrap();
        assert_eq!(
            pairs,
            [
                ("layer.weight".to_string(), vec![2, 3]),
                ("step".to_string(), vec![]),
                ("mask".to_string(), vec![3]),
                ("a.double".to_string(), vec![2, 1]),
                ("transposed".to_string(), vec![3, 2]),
            ]
        );
        // The file is exactly: 8 bytes of length, the header, 6*4 + 8 + 3 + 2*8 + 6*4 bytes.
        let bytes = std::fs::read(&path.0).unwrap();
        let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), 8 + header + 24 + 8 + 3 + 16 + 24);
    });
}

#[test]
fn a_second_linear_loaded_from_the_first_computes_the_same_output() {
    leak_checked(|| {
        let path = TempPath::new("linear");
        let a = known_linear();
        let x = Tensor::from_slice(&[1.0f32, 1.0, 2.0, -1.0], &[2, 2], Device::CPU).unwrap();
        // Row [1, 1]: [1+2+0.5, 3+4-0.5] = [3.5, 6.5]; row [2, -1]: [2-2+0.5, 6-4-0.5].
        let want = vec![3.5f32, 6.5, 0.5, 1.5];
        assert_eq!(a.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);

        // Through a file.
        a.state_dict().unwrap().save(&path.0).unwrap();
        let mut b = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
        assert_ne!(b.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);
        b.load_state_dict(&StateDict::load(&path.0).unwrap())
            .unwrap();
        assert_eq!(b.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);

        // Directly, and the file is the one Module::load reads too.
        let mut c = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
        c.load_state_dict(&a.state_dict().unwrap()).unwrap();
        assert_eq!(c.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);
        let mut d = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
        d.load(&path.0).unwrap();
        assert_eq!(d.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);

        // load_state_dict copies: b's weights are its own, not a's.
        assert!(!b.parameters().unwrap()[0].shares_storage(&a.parameters().unwrap()[0]));

        // A float64 state dict converts to the module's float32.
        let mut e = Module::linear(2, 2, true, DType::Float32, Device::CPU).unwrap();
        let sd64 = StateDict::from_pairs(
            a.state_dict()
                .unwrap()
                .entries()
                .unwrap()
                .into_iter()
                .map(|(n, t)| (n, t.to_dtype(DType::Float64).unwrap())),
        )
        .unwrap();
        e.load_state_dict(&sd64).unwrap();
        assert_eq!(e.parameters().unwrap()[0].dtype(), DType::Float32);
        assert_eq!(e.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);
    });
}

#[test]
fn a_modules_state_dict_is_shared_with_it() {
    leak_checked(|| {
        let model = Sequential::new()
            .add(known_linear())
            .add(Module::relu().unwrap())
            .add(Module::linear(2, 1, false, DType::Float32, Device::CPU).unwrap())
            .build()
            .unwrap();
        let sd = model.state_dict().unwrap();
        assert_eq!(sd.names().unwrap(), ["0.weight", "0.bias", "2.weight"]);
        let w = sd.get("0.weight").unwrap().unwrap();
        assert_eq!(w.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        // An SGD step (lr 1, gradient of sum(w * 1) = 1) changes what the dict holds.
        let mut opt = Sgd::new(&model.parameters().unwrap()[..1], 1.0)
            .build()
            .unwrap();
        let p = &model.parameters().unwrap()[0];
        p.sum_all().unwrap().backward().unwrap();
        opt.step().unwrap();
        assert_eq!(w.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            sd.get("0.weight").unwrap().unwrap().to_vec::<f32>().unwrap(),
            vec![0.0, 1.0, 2.0, 3.0]
        );
        // Inserting into the dict does not change the module.
        let mut sd = sd;
        sd.insert("extra", &w).unwrap();
        assert_eq!(model.state_dict().unwrap().len(), 3);
    });
}

#[test]
fn load_state_dict_errors_are_the_c_apis_and_leave_the_module_unchanged() {
    leak_checked(|| {
        let mut lin = known_linear();
        let x = Tensor::from_slice(&[1.0f32, 1.0], &[1, 2], Device::CPU).unwrap();
        let unchanged = |lin: &Module| {
            assert_eq!(
                lin.forward(&x).unwrap().to_vec::<f32>().unwrap(),
                vec![3.5, 6.5]
            );
        };
        let bias = Tensor::from_slice(&[9.0f32, 9.0], &[2], Device::CPU).unwrap();

        // A wrong shape: InvalidArgument naming the key (dt_module_load_state_dict).
        let wrong = StateDict::from_pairs([
            ("weight", Tensor::zeros(&[3, 2], DType::Float32, Device::CPU).unwrap()),
            ("bias", bias.clone()),
        ])
        .unwrap();
        let e = lin.load_state_dict(&wrong).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("weight"), "{}", e.message);
        unchanged(&lin); // all or nothing: bias was not loaded either

        // A missing key.
        let missing = StateDict::from_pairs([("bias", &bias)]).unwrap();
        let e = lin.load_state_dict(&missing).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("weight"), "{}", e.message);
        unchanged(&lin);

        // An unexpected key.
        let mut extra = lin.state_dict().unwrap();
        extra.insert("running_mean", &bias).unwrap();
        let e = lin.load_state_dict(&extra).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        assert!(e.message.contains("running_mean"), "{}", e.message);
        unchanged(&lin);

        // The same wrong shape through a file and Module::load is a Format error.
        let path = TempPath::new("wrong-shape");
        wrong.save(&path.0).unwrap();
        let e = lin.load(&path.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::Format, "{e}");
        unchanged(&lin);
    });
}

#[test]
fn file_errors() {
    leak_checked(|| {
        // No such file: Io, naming the path.
        let nowhere = std::env::temp_dir().join("devtensor-rs-sd-no-such-dir/x.safetensors");
        let e = StateDict::load(&nowhere).unwrap_err();
        assert_eq!(e.code, ErrorCode::Io, "{e}");
        assert!(e.message.contains("devtensor-rs-sd-no-such-dir"), "{}", e.message);
        let sd = StateDict::from_pairs([(
            "t",
            Tensor::ones(&[2], DType::Float32, Device::CPU).unwrap(),
        )])
        .unwrap();
        let e = sd.save(&nowhere).unwrap_err();
        assert_eq!(e.code, ErrorCode::Io, "{e}");
        // Not a safetensors file: Format.
        let path = TempPath::new("garbage");
        std::fs::write(&path.0, b"this is not a safetensors file").unwrap();
        let e = StateDict::load(&path.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::Format, "{e}");
        // An empty path, and the name the format reserves.
        assert_eq!(sd.save("").unwrap_err().code, ErrorCode::InvalidArgument);
        let mut meta = StateDict::new().unwrap();
        meta.insert("__metadata__", &sd.get("t").unwrap().unwrap())
            .unwrap();
        let e = meta.save(&path.0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        // A device that does not exist.
        sd.save(&path.0).unwrap();
        let e = StateDict::load_to(&path.0, Device::Cpu(99)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidDevice, "{e}");
        // A name with a NUL byte cannot be inserted, and is never found.
        let mut sd = sd;
        assert_eq!(
            sd.insert("a\0b", &Tensor::ones(&[1], DType::Float32, Device::CPU).unwrap())
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgument
        );
        assert!(sd.get("a\0b").unwrap().is_none());
        assert_eq!(sd.len(), 1);
    });
}

#[test]
fn empty_dicts_share_and_threads() {
    leak_checked(|| {
        let path = TempPath::new("empty");
        let empty = StateDict::new().unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.iter().count(), 0);
        empty.save(&path.0).unwrap();
        assert!(StateDict::load(&path.0).unwrap().is_empty());

        // share(): the same map; insert through one is seen by the other.
        let mut sd = StateDict::new().unwrap();
        let other = sd.share();
        sd.insert("a", &Tensor::ones(&[1], DType::Float32, Device::CPU).unwrap())
            .unwrap();
        assert_eq!(other.names().unwrap(), ["a"]);
        drop(other);

        // Send + Sync: read from several threads at once.
        let sums: Vec<f64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let t = sd.get("a").unwrap().unwrap();
                        t.sum_all().unwrap().item().unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(sums, vec![1.0; 4]);
        // And moved to another thread.
        let n = std::thread::spawn(move || sd.len()).join().unwrap();
        assert_eq!(n, 1);
    });
}
