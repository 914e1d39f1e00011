//! Normalisation, embedding and the module tree (dt_batch_norm*, dt_layer_norm*,
//! dt_group_norm*, dt_embedding*, dt_module_kind, dt_module_child*): hand-computed values,
//! PyTorch's parameter and buffer names, the running statistics of training and eval
//! mode, the errors, and children that are the parent's own modules. Each test runs alone
//! and checks that it leaves no handle behind.
use devtensor::nn::{
    BatchNorm1d, BatchNorm2d, Embedding, GroupNorm, LayerNorm, Module, RunningStats, Sequential,
};
use devtensor::{DType, Device, ErrorCode, Tensor};

mod common;
use common::assert_near;
use common::leak_checked;

fn f32s(data: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

fn names(named: &[(String, Tensor)]) -> Vec<&str> {
    named.iter().map(|(n, _)| n.as_str()).collect()
}

/// The buffer `name` of `m`, as f32 values.
fn buffer(m: &Module, name: &str) -> Vec<f32> {
    let (_, t) = m
        .named_buffers()
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no buffer {name}"));
    t.to_dtype(DType::Float32).unwrap().to_vec::<f32>().unwrap()
}

/// A BatchNorm2d step by hand. x [N=2, C=2, 1, 1]: channel 0 holds {0, 2} (mean 1, biased
/// variance 1, unbiased 2), channel 1 {10, 14} (mean 12, biased variance 4, unbiased 8).
#[test]
fn batch_norm2d_training_then_eval() {
    leak_checked(|| {
        let mut bn = BatchNorm2d::new(2).build().unwrap();
        assert_eq!(bn.kind().unwrap(), "BatchNorm2d");
        let params = bn.named_parameters().unwrap();
        assert_eq!(names(&params), ["weight", "bias"]);
        assert_eq!(params[0].1.to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
        assert_eq!(params[1].1.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
        let buffers = bn.named_buffers().unwrap();
        assert_eq!(
            names(&buffers),
            ["running_mean", "running_var", "num_batches_tracked"]
        );
        assert_eq!(buffers[2].1.dtype(), DType::Int64);
        assert_eq!(buffers[2].1.shape(), Vec::<i64>::new());

        let x = f32s(&[0.0, 10.0, 2.0, 14.0], &[2, 2, 1, 1]);
        let y = bn.forward(&x).unwrap(); // a new module is in training mode, as in PyTorch
        assert_eq!(y.shape(), vec![2, 2, 1, 1]);
        // (x - mean) / sqrt(var + 1e-5): -1, +1 per channel (0.999995, 0.99999875)
        assert_near(
            "training",
            &y.to_vec::<f32>().unwrap(),
            &[-1.0, -1.0, 1.0, 1.0],
            1e-4,
        );
        // running = 0.9 * running + 0.1 * batch (the variance unbiased)
        assert_near(
            "running_mean",
            &buffer(&bn, "running_mean"),
            &[0.1, 1.2],
            1e-6,
        );
        assert_near(
            "running_var",
            &buffer(&bn, "running_var"),
            &[0.9 + 0.1 * 2.0, 0.9 + 0.1 * 8.0],
            1e-6,
        );
        assert_eq!(buffers[2].1.to_vec::<i64>().unwrap(), vec![1]);
        // The buffer handles taken before the step are the module's: they see it.
        assert_near(
            "running_mean handle",
            &buffers[0].1.to_vec::<f32>().unwrap(),
            &[0.1, 1.2],
            1e-6,
        );

        // Eval mode normalises with the running statistics and updates nothing.
        bn.eval().unwrap();
        let e = 1e-5;
        assert_near(
            "eval",
            &bn.forward(&x).unwrap().to_vec::<f32>().unwrap(),
            &[
                (0.0 - 0.1) / (1.1f64 + e).sqrt(),
                (10.0 - 1.2) / (1.7f64 + e).sqrt(),
                (2.0 - 0.1) / (1.1f64 + e).sqrt(),
                (14.0 - 1.2) / (1.7f64 + e).sqrt(),
            ],
            1e-4,
        );
        assert_eq!(buffers[2].1.to_vec::<i64>().unwrap(), vec![1]);
        assert_near(
            "running_mean after eval",
            &buffer(&bn, "running_mean"),
            &[0.1, 1.2],
            1e-6,
        );

        // Training again: a second step (num_batches_tracked 2).
        bn.train().unwrap();
        bn.forward(&x).unwrap();
        assert_eq!(buffers[2].1.to_vec::<i64>().unwrap(), vec![2]);
        assert_near(
            "second step",
            &buffer(&bn, "running_mean"),
            &[0.19, 2.28],
            1e-5,
        );
    });
}

#[test]
fn batch_norm_errors() {
    leak_checked(|| {
        let bn = BatchNorm2d::new(3).build().unwrap();
        let x = Tensor::zeros(&[2, 2, 1, 1], DType::Float32, Device::CPU).unwrap();
        let e = bn.forward(&x).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("BatchNorm2d"), "{}", e.message);
        let flat = Tensor::zeros(&[2, 3], DType::Float32, Device::CPU).unwrap();
        assert_eq!(
            bn.forward(&flat).unwrap_err().code,
            ErrorCode::ShapeMismatch
        );
        // One value per channel in training mode.
        let one = Tensor::zeros(&[1, 3, 1, 1], DType::Float32, Device::CPU).unwrap();
        assert_eq!(bn.forward(&one).unwrap_err().code, ErrorCode::ShapeMismatch);

        for (b, what) in [
            (BatchNorm1d::new(0), "zero features"),
            (BatchNorm1d::new(2).eps(0.0), "eps 0"),
            (BatchNorm1d::new(2).momentum(1.5), "momentum over 1"),
            (
                BatchNorm1d::new(2).momentum(-0.1),
                "a negative Some momentum",
            ),
        ] {
            assert_eq!(
                b.build().unwrap_err().code,
                ErrorCode::InvalidArgument,
                "{what}"
            );
        }
        let e = BatchNorm1d::new(2).dtype(DType::Int64).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch);
    });
}

#[test]
fn batch_norm_momentum_and_flags() {
    leak_checked(|| {
        let b1 = f32s(&[0.0, 2.0], &[2, 1]); // mean 1, unbiased variance 2
        let b2 = f32s(&[4.0, 6.0], &[2, 1]); // mean 5, unbiased variance 2

        // momentum=None: the cumulative average of the batches' statistics.
        let cum = BatchNorm1d::new(1).momentum(None).build().unwrap();
        cum.forward(&b1).unwrap();
        cum.forward(&b2).unwrap();
        assert_near(
            "cumulative mean",
            &buffer(&cum, "running_mean"),
            &[3.0],
            1e-6,
        );
        assert_near("cumulative var", &buffer(&cum, "running_var"), &[2.0], 1e-6);
        assert_near("batches", &buffer(&cum, "num_batches_tracked"), &[2.0], 0.0);

        // An explicit 0: the running statistics stay; 0.5: halfway.
        let frozen = BatchNorm1d::new(1).momentum(0.0).build().unwrap();
        frozen.forward(&b1).unwrap();
        assert_eq!(buffer(&frozen, "running_mean"), vec![0.0]);
        assert_eq!(buffer(&frozen, "running_var"), vec![1.0]);
        let half = BatchNorm1d::new(1).momentum(Some(0.5)).build().unwrap();
        half.forward(&b1).unwrap();
        assert_near("momentum 0.5", &buffer(&half, "running_mean"), &[0.5], 1e-6);
        assert_near("momentum 0.5", &buffer(&half, "running_var"), &[1.5], 1e-6);

        // [N, C, L] input to BatchNorm1d: each channel over N and L.
        let seq = BatchNorm1d::new(2).affine(false).build().unwrap();
        assert!(seq.parameters().unwrap().is_empty());
        let x = f32s(&[0.0, 2.0, 10.0, 14.0], &[1, 2, 2]);
        assert_near(
            "[N, C, L]",
            &seq.forward(&x).unwrap().to_vec::<f32>().unwrap(),
            &[-1.0, 1.0, -1.0, 1.0],
            1e-4,
        );

        // Not tracking: no buffers, batch statistics in eval mode too.
        let mut plain = BatchNorm1d::new(1)
            .track_running_stats(false)
            .dtype(DType::Float64)
            .device(Device::CPU)
            .build()
            .unwrap();
        assert!(plain.named_buffers().unwrap().is_empty());
        plain.eval().unwrap();
        let x = Tensor::from_slice(&[0.0f64, 2.0], &[2, 1], Device::CPU).unwrap();
        let y = plain.forward(&x).unwrap().to_vec::<f64>().unwrap();
        assert!(
            (y[0] + 1.0).abs() < 1e-4 && (y[1] - 1.0).abs() < 1e-4,
            "{y:?}"
        );
    });
}

#[test]
fn batch_norm_functional_is_out_of_place() {
    leak_checked(|| {
        let x = f32s(&[0.0, 10.0, 2.0, 14.0], &[2, 2]);
        let stats = RunningStats::new(2, DType::Float32, Device::CPU).unwrap();
        let w = f32s(&[2.0, 3.0], &[2]);
        let b = f32s(&[0.5, -1.0], &[2]);
        let (y, new) = x
            .batch_norm_training(Some(&stats), Some(&w), Some(&b), 0.1, 1e-5)
            .unwrap();
        assert_near(
            "training",
            &y.to_vec::<f32>().unwrap(),
            &[-1.5, -4.0, 2.5, 2.0],
            1e-4,
        );
        let new = new.expect("running given: updated statistics returned");
        assert_near(
            "new mean",
            &new.mean.to_vec::<f32>().unwrap(),
            &[0.1, 1.2],
            1e-6,
        );
        assert_near(
            "new var",
            &new.var.to_vec::<f32>().unwrap(),
            &[1.1, 1.7],
            1e-6,
        );
        // The caller's tensors, and every clone of them, are left as they were.
        assert_eq!(stats.mean.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
        assert_eq!(stats.var.to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
        assert!(!new.mean.shares_storage(&stats.mean));

        // Evaluation with the updated statistics; nothing is written.
        let e = 1e-5;
        let y = x.batch_norm(&new, None, None, e).unwrap();
        assert_near(
            "eval",
            &y.to_vec::<f32>().unwrap(),
            &[
                -0.1 / (1.1f64 + e).sqrt(),
                8.8 / (1.7f64 + e).sqrt(),
                1.9 / (1.1f64 + e).sqrt(),
                12.8 / (1.7f64 + e).sqrt(),
            ],
            1e-4,
        );
        assert_near(
            "unchanged",
            &new.mean.to_vec::<f32>().unwrap(),
            &[0.1, 1.2],
            1e-6,
        );

        // Training without running statistics returns none; gradients flow to the input.
        x.set_requires_grad(true).unwrap();
        let (y, none) = x.batch_norm_training(None, None, None, 0.1, 1e-5).unwrap();
        assert!(none.is_none());
        assert_eq!(y.grad_fn_name().unwrap(), "NativeBatchNormBackward0");
        assert_near(
            "no running",
            &y.to_vec::<f32>().unwrap(),
            &[-1.0, -1.0, 1.0, 1.0],
            1e-4,
        );

        // Errors.
        let three = Tensor::ones(&[3], DType::Float32, Device::CPU).unwrap();
        let e = x
            .batch_norm_training(None, Some(&three), None, 0.1, 1e-5)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert_eq!(
            x.batch_norm(&stats, None, None, 0.0).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        let f64s = RunningStats::new(2, DType::Float64, Device::CPU).unwrap();
        assert_eq!(
            x.batch_norm(&f64s, None, None, 1e-5).unwrap_err().code,
            ErrorCode::DtypeMismatch
        );
    });
}

#[test]
fn layer_norm_values_and_names() {
    leak_checked(|| {
        let x = f32s(&[1.0, 2.0, 3.0], &[1, 3]);
        // mean 2, biased variance 2/3: (x - 2) / sqrt(2/3 + 1e-5)
        let want = [-1.2247357, 0.0, 1.2247357];
        assert_near(
            "layer_norm",
            &x.layer_norm(&[3], None, None, 1e-5)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            &want,
            1e-5,
        );
        let ln = LayerNorm::new(&[3]).build().unwrap();
        assert_eq!(ln.kind().unwrap(), "LayerNorm");
        let p = ln.named_parameters().unwrap();
        assert_eq!(names(&p), ["weight", "bias"]);
        assert_eq!((p[0].1.shape(), p[1].1.shape()), (vec![3], vec![3]));
        assert_near(
            "LayerNorm",
            &ln.forward(&x).unwrap().to_vec::<f32>().unwrap(),
            &want,
            1e-5,
        );

        let w = f32s(&[2.0, 2.0, 2.0], &[3]);
        let b = f32s(&[1.0, 1.0, 1.0], &[3]);
        assert_near(
            "affine",
            &x.layer_norm(&[3], Some(&w), Some(&b), 1e-5)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            &[1.0 - 2.0 * 1.2247357, 1.0, 1.0 + 2.0 * 1.2247357],
            1e-4,
        );

        let no_bias = LayerNorm::new(&[2, 3])
            .bias(false)
            .dtype(DType::Float64)
            .build()
            .unwrap();
        let p = no_bias.named_parameters().unwrap();
        assert_eq!(names(&p), ["weight"]);
        assert_eq!(
            (p[0].1.shape(), p[0].1.dtype()),
            (vec![2, 3], DType::Float64)
        );
        let none = LayerNorm::new(&[3])
            .elementwise_affine(false)
            .eps(1e-3)
            .build()
            .unwrap();
        assert!(none.parameters().unwrap().is_empty());

        let x4 = Tensor::zeros(&[2, 4], DType::Float32, Device::CPU).unwrap();
        let e = ln.forward(&x4).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("LayerNorm"), "{}", e.message);
        assert_eq!(
            x4.layer_norm(&[3], None, None, 1e-5).unwrap_err().code,
            ErrorCode::ShapeMismatch
        );
        assert_eq!(
            LayerNorm::new(&[0]).build().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    });
}

#[test]
fn group_norm_shapes_names_and_values() {
    leak_checked(|| {
        let gn = GroupNorm::new(2, 4).build().unwrap();
        assert_eq!(gn.kind().unwrap(), "GroupNorm");
        let p = gn.named_parameters().unwrap();
        assert_eq!(names(&p), ["weight", "bias"]);
        assert_eq!((p[0].1.shape(), p[1].1.shape()), (vec![4], vec![4]));
        let x = Tensor::randn(&[2, 4, 3, 5], DType::Float32, Device::CPU).unwrap();
        assert_eq!(gn.forward(&x).unwrap().shape(), vec![2, 4, 3, 5]);
        // Groups {1, 3} (mean 2, variance 1) and {10, 14} (mean 12, variance 4).
        let v = f32s(&[1.0, 3.0, 10.0, 14.0], &[1, 4]);
        let want = [-1.0, 1.0, -1.0, 1.0];
        assert_near(
            "group_norm",
            &v.group_norm(2, None, None, 1e-5)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            &want,
            1e-4,
        );
        assert_near(
            "GroupNorm",
            &gn.forward(&v).unwrap().to_vec::<f32>().unwrap(),
            &want,
            1e-4,
        );
        // One group: the whole sample. {1, 3, 10, 14}: mean 7, variance 27.5.
        let one = v
            .group_norm(1, None, None, 1e-5)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert_near(
            "one group",
            &one[..1],
            &[-6.0 / (27.5f64 + 1e-5).sqrt()],
            1e-5,
        );

        assert!(GroupNorm::new(1, 3)
            .affine(false)
            .build()
            .unwrap()
            .parameters()
            .unwrap()
            .is_empty());
        assert_eq!(
            GroupNorm::new(3, 4).build().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            v.group_norm(3, None, None, 1e-5).unwrap_err().code,
            ErrorCode::ShapeMismatch
        );
        let six = Tensor::zeros(&[1, 6], DType::Float32, Device::CPU).unwrap();
        let e = gn.forward(&six).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("GroupNorm"), "{}", e.message);
    });
}

#[test]
fn embedding_rows_padding_and_errors() {
    leak_checked(|| {
        let w = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]);
        let idx = Tensor::from_slice(&[2i64, 0, 1, 1], &[2, 2], Device::CPU).unwrap();
        let y = idx.embedding(&w, None).unwrap();
        assert_eq!(y.shape(), vec![2, 2, 2]);
        assert_eq!(
            y.to_vec::<f32>().unwrap(),
            vec![4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 2.0, 3.0]
        );
        let idx32 = Tensor::from_slice(&[1i32], &[1], Device::CPU).unwrap();
        assert_eq!(
            idx32
                .embedding(&w, Some(0))
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            vec![2.0, 3.0]
        );

        // The module: N(0, 1) rows, the padding row zero and without gradient.
        let emb = Embedding::new(5, 3).padding_idx(0).build().unwrap();
        assert_eq!(emb.kind().unwrap(), "Embedding");
        let p = emb.named_parameters().unwrap();
        assert_eq!(names(&p), ["weight"]);
        let weight = &p[0].1;
        assert_eq!(weight.shape(), vec![5, 3]);
        let rows = weight.to_vec::<f32>().unwrap();
        assert_eq!(&rows[..3], &[0.0, 0.0, 0.0]);
        assert!(
            rows[3..].iter().filter(|v| **v != 0.0).count() >= 10,
            "{rows:?}"
        );
        let i = Tensor::from_slice(&[0i64, 2, 2], &[3], Device::CPU).unwrap();
        let y = emb.forward(&i).unwrap();
        assert_eq!(
            y.narrow(0, 1, 1).unwrap().to_vec::<f32>().unwrap(),
            rows[6..9].to_vec()
        );
        y.sum_all().unwrap().backward().unwrap();
        let g = weight.grad().unwrap().unwrap().to_vec::<f32>().unwrap();
        // row 0 is padding (no gradient though used once), row 2 used twice
        assert_eq!(
            g,
            vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        );

        let last = Embedding::new(4, 2)
            .padding_idx(-1)
            .dtype(DType::Float64)
            .build()
            .unwrap();
        let r = last.parameters().unwrap()[0].to_vec::<f64>().unwrap();
        assert_eq!(&r[6..], &[0.0, 0.0]);
        let none = Embedding::new(4, 2).padding_idx(None).build().unwrap();
        assert_eq!(none.parameters().unwrap()[0].shape(), vec![4, 2]);

        // Errors: float indices, an index out of range (named), a padding index outside.
        let floats = f32s(&[0.0, 1.0], &[2]);
        assert_eq!(
            emb.forward(&floats).unwrap_err().code,
            ErrorCode::DtypeMismatch
        );
        assert_eq!(
            floats.embedding(&w, None).unwrap_err().code,
            ErrorCode::DtypeMismatch
        );
        let far = Tensor::from_slice(&[3i64], &[1], Device::CPU).unwrap();
        let e = far.embedding(&w, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains('3'), "{}", e.message);
        assert_eq!(
            Embedding::new(5, 3)
                .padding_idx(5)
                .build()
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            idx.embedding(&w, Some(3)).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    });
}

/// Sequential(Linear(2, 3), BatchNorm1d(3)).
fn two_layers() -> Module {
    Sequential::new()
        .add(Module::linear(2, 3, true, DType::Float32, Device::CPU).unwrap())
        .add(BatchNorm1d::new(3).build().unwrap())
        .build()
        .unwrap()
}

#[test]
fn children_are_the_parents_modules() {
    leak_checked(|| {
        let net = two_layers();
        assert_eq!(net.kind().unwrap(), "Sequential");
        let children = net.children().unwrap();
        let kinds: Vec<String> = children.iter().map(|(_, m)| m.kind().unwrap()).collect();
        assert_eq!(
            children.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["0", "1"]
        );
        assert_eq!(kinds, ["Linear", "BatchNorm1d"]);
        assert!(children[0].1.children().unwrap().is_empty());

        // child("1") shares its parameters and buffers with the parent.
        let bn = net.child("1").unwrap();
        let parent = net.state_dict().unwrap();
        let mine = bn.named_parameters().unwrap();
        assert_eq!(names(&mine), ["weight", "bias"]);
        assert!(mine[0]
            .1
            .shares_storage(&parent.get("1.weight").unwrap().unwrap()));
        assert!(children[1].1.parameters().unwrap()[1]
            .shares_storage(&parent.get("1.bias").unwrap().unwrap()));
        // A training step through the child: the parent's running_mean moves.
        let x = f32s(&[0.0, 10.0, 4.0, 2.0, 14.0, 6.0], &[2, 3]);
        bn.forward(&x).unwrap();
        let rm = parent.get("1.running_mean").unwrap().unwrap();
        assert_near(
            "parent's running_mean",
            &rm.to_vec::<f32>().unwrap(),
            &[0.1, 1.2, 0.5],
            1e-6,
        );
        assert_eq!(
            parent
                .get("1.num_batches_tracked")
                .unwrap()
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            vec![1]
        );
        // Eval through the child is the parent's too: the parent's forward then uses
        // the running statistics, so one sample (training would refuse it) works.
        let mut bn = bn;
        bn.eval().unwrap();
        let one = Tensor::zeros(&[1, 2], DType::Float32, Device::CPU).unwrap();
        assert_eq!(net.forward(&one).unwrap().shape(), vec![1, 3]);

        // Errors: the missing part and the children there are.
        let e = net.child("5").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("no child \"5\""), "{}", e.message);
        assert!(
            e.message.contains("Sequential's children: 0, 1"),
            "{}",
            e.message
        );
        let e = net.child("0.weight").unwrap_err();
        assert!(
            e.message.contains("Linear has no children"),
            "{}",
            e.message
        );
        assert_eq!(
            net.child("0\0").unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    });
}

#[test]
fn nested_paths_and_a_child_outliving_its_parent() {
    leak_checked(|| {
        let net = Sequential::new()
            .add(Module::relu().unwrap())
            .add(two_layers())
            .build()
            .unwrap();
        assert_eq!(net.child("1.1").unwrap().kind().unwrap(), "BatchNorm1d");
        let inner = net.child("1").unwrap();
        let lin = net.child("1.0").unwrap();
        assert!(lin.parameters().unwrap()[0].shares_storage(&inner.parameters().unwrap()[0]));
        drop(net);
        assert_eq!(inner.kind().unwrap(), "Sequential");
        let p = inner.named_parameters().unwrap();
        assert_eq!(names(&p), ["0.weight", "0.bias", "1.weight", "1.bias"]);
        let x = Tensor::ones(&[4, 2], DType::Float32, Device::CPU).unwrap();
        assert_eq!(inner.forward(&x).unwrap().shape(), vec![4, 3]);
    });
}

#[test]
fn children_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BatchNorm1d>();
    assert_send_sync::<BatchNorm2d>();
    assert_send_sync::<LayerNorm>();
    assert_send_sync::<GroupNorm>();
    assert_send_sync::<Embedding>();
    assert_send_sync::<RunningStats>();
    assert_send_sync::<Vec<(String, Module)>>();
    leak_checked(|| {
        let net = two_layers();
        let (_, lin) = net.children().unwrap().into_iter().next().unwrap();
        let x = Tensor::ones(&[2, 2], DType::Float32, Device::CPU).unwrap();
        let want = lin.forward(&x).unwrap().to_vec::<f32>().unwrap();
        // The child moves into a worker while the parent runs forward here.
        let worker = std::thread::spawn(move || {
            let x = Tensor::ones(&[2, 2], DType::Float32, Device::CPU).unwrap();
            lin.forward(&x).unwrap().to_vec::<f32>().unwrap()
        });
        net.forward(&x).unwrap();
        assert_eq!(worker.join().unwrap(), want);
    });
}
