//! Convolution and 2-d pooling (dt_conv1d, dt_conv2d, dt_conv_transpose2d, dt_*_pool2d
//! and their modules): shapes and parameter names, hand-computed values, and the errors.
use devtensor::nn::{
    AvgPool2d, AvgPool2dOptions, Conv1d, Conv1dOptions, Conv2d, Conv2dOptions, ConvTranspose2d,
    ConvTranspose2dOptions, MaxPool2d, MaxPool2dOptions, Module, Padding, Padding1d,
};
use devtensor::{DType, Device, ErrorCode, Tensor};

fn x4x4() -> Tensor {
    Tensor::arange(0.0, 16.0, 1.0, DType::Float32, Device::CPU)
        .unwrap()
        .reshape(&[1, 1, 4, 4])
        .unwrap()
}

#[test]
fn conv2d_module_shapes_and_names() {
    let conv = Conv2d::new(4, 6, (3, 3))
        .stride((2, 2))
        .padding((1, 1))
        .groups(2)
        .build()
        .unwrap();
    let ps = conv.named_parameters().unwrap();
    let names: Vec<&str> = ps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["weight", "bias"]);
    assert_eq!(ps[0].1.shape(), vec![6, 2, 3, 3]);
    assert_eq!(ps[1].1.shape(), vec![6]);
    let x = Tensor::randn(&[2, 4, 7, 8], DType::Float32, Device::CPU).unwrap();
    assert_eq!(conv.forward(&x).unwrap().shape(), vec![2, 6, 4, 4]);

    let same = Conv2d::new(1, 1, (3, 3))
        .padding(Padding::Same)
        .bias(false)
        .dtype(DType::Float64)
        .device(Device::CPU)
        .build()
        .unwrap();
    let ps = same.parameters().unwrap();
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].dtype(), DType::Float64);
    let y = Tensor::randn(&[1, 5, 6], DType::Float64, Device::CPU).unwrap();
    assert_eq!(same.forward(&y).unwrap().shape(), vec![1, 5, 6]);
}

#[test]
fn conv2d_module_errors() {
    let conv = Conv2d::new(4, 1, (3, 3)).build().unwrap();
    let small = Tensor::randn(&[1, 4, 2, 2], DType::Float32, Device::CPU).unwrap();
    let e = conv.forward(&small).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("Conv2d"), "{}", e.message);
    let e = Conv2d::new(1, 1, (3, 3))
        .padding(Padding::Same)
        .stride((2, 2))
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Conv2d::new(3, 2, (3, 3)).groups(2).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Conv2d::new(1, 1, (3, 3))
        .dtype(DType::Int64)
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);
}

#[test]
fn conv2d_functional_values() {
    let x = Tensor::from_slice(
        &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1, 1, 3, 3],
        Device::CPU,
    )
    .unwrap();
    let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU).unwrap();
    let y = x.conv2d(&w, None, &Conv2dOptions::default()).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![12.0, 16.0, 24.0, 28.0]);

    // padded to 5x5, windows at rows/columns 0 and 2: [1, 2+3, 4+7, 5+6+8+9] + 0.5
    let b = Tensor::from_slice(&[0.5f32], &[1], Device::CPU).unwrap();
    let opts = Conv2dOptions {
        stride: (2, 2),
        padding: Padding::Explicit(1, 1),
        ..Conv2dOptions::default()
    };
    let y = x.conv2d(&w, Some(&b), &opts).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.5, 5.5, 11.5, 28.5]);

    let opts = Conv2dOptions {
        dilation: (2, 2),
        ..Conv2dOptions::default()
    };
    let y = x.conv2d(&w, None, &opts).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0 + 3.0 + 7.0 + 9.0]);

    let big = Tensor::ones(&[1, 1, 4, 4], DType::Float32, Device::CPU).unwrap();
    let e = x.conv2d(&big, None, &Conv2dOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
}

#[test]
fn pooling_values() {
    let x = x4x4();
    let mp = x.max_pool2d((2, 2), &MaxPool2dOptions::default()).unwrap();
    assert_eq!(mp.shape(), vec![1, 1, 2, 2]);
    assert_eq!(mp.to_vec::<f32>().unwrap(), vec![5.0, 7.0, 13.0, 15.0]);
    let ap = x.avg_pool2d((2, 2), &AvgPool2dOptions::default()).unwrap();
    assert_eq!(ap.to_vec::<f32>().unwrap(), vec![2.5, 4.5, 10.5, 12.5]);
    let aap = x.adaptive_avg_pool2d((1, 1)).unwrap();
    assert_eq!(aap.shape(), vec![1, 1, 1, 1]);
    assert_eq!(aap.to_vec::<f32>().unwrap(), vec![7.5]);

    // stride 1, padding 1: the corner windows count the padding unless told not to
    let padded = AvgPool2dOptions {
        stride: Some((1, 1)),
        padding: (1, 1),
        ..AvgPool2dOptions::default()
    };
    let v = x
        .avg_pool2d((2, 2), &padded)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!((v.len(), v[0], v[1]), (25, 0.0, 0.25));
    let exclude = AvgPool2dOptions {
        count_include_pad: false,
        ..padded
    };
    let v = x
        .avg_pool2d((2, 2), &exclude)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(v[1], 0.5);

    let modules = [
        (
            MaxPool2d::new((2, 2)).build().unwrap(),
            vec![5.0f32, 7.0, 13.0, 15.0],
        ),
        (
            AvgPool2d::new((2, 2)).build().unwrap(),
            vec![2.5, 4.5, 10.5, 12.5],
        ),
        (Module::adaptive_avg_pool2d((1, 1)).unwrap(), vec![7.5]),
    ];
    for (m, want) in &modules {
        assert_eq!(&m.forward(&x).unwrap().to_vec::<f32>().unwrap(), want);
        assert!(m.parameters().unwrap().is_empty());
    }
    let strided = MaxPool2d::new((2, 2))
        .stride((1, 1))
        .dilation((1, 1))
        .padding((0, 0));
    assert_eq!(
        strided.build().unwrap().forward(&x).unwrap().shape(),
        vec![1, 1, 3, 3]
    );
    let strided = AvgPool2d::new((2, 2))
        .stride((2, 2))
        .count_include_pad(false);
    assert_eq!(
        strided.build().unwrap().forward(&x).unwrap().shape(),
        vec![1, 1, 2, 2]
    );
}

#[test]
fn pooling_errors() {
    let x = x4x4();
    let big = MaxPool2d::new((5, 5)).build().unwrap();
    let e = big.forward(&x).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("MaxPool2d"), "{}", e.message);
    let e = x
        .avg_pool2d((5, 5), &AvgPool2dOptions::default())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    let e = MaxPool2d::new((0, 2)).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Module::adaptive_avg_pool2d((0, 1)).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let over_half = MaxPool2dOptions {
        padding: (2, 2),
        ..MaxPool2dOptions::default()
    };
    let e = x.max_pool2d((2, 2), &over_half).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let ints = Tensor::from_slice(&[1i64, 2, 3, 4], &[1, 1, 2, 2], Device::CPU).unwrap();
    let e = ints.adaptive_avg_pool2d((1, 1)).unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);
}

#[test]
fn conv1d_module_shapes_and_names() {
    let conv = Conv1d::new(4, 6, 3)
        .stride(2)
        .padding(1)
        .dilation(1)
        .groups(2)
        .build()
        .unwrap();
    let ps = conv.named_parameters().unwrap();
    let names: Vec<&str> = ps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["weight", "bias"]);
    assert_eq!(ps[0].1.shape(), vec![6, 2, 3]);
    assert_eq!(ps[1].1.shape(), vec![6]);
    let x = Tensor::randn(&[2, 4, 8], DType::Float32, Device::CPU).unwrap();
    assert_eq!(conv.forward(&x).unwrap().shape(), vec![2, 6, 4]);
    // unbatched
    let x2 = Tensor::randn(&[4, 8], DType::Float32, Device::CPU).unwrap();
    assert_eq!(conv.forward(&x2).unwrap().shape(), vec![6, 4]);

    let same = Conv1d::new(1, 1, 3)
        .padding(Padding1d::Same)
        .bias(false)
        .dtype(DType::Float64)
        .device(Device::CPU)
        .build()
        .unwrap();
    let ps = same.parameters().unwrap();
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].dtype(), DType::Float64);
    assert_eq!(ps[0].shape(), vec![1, 1, 3]);
    let y = Tensor::randn(&[2, 1, 5], DType::Float64, Device::CPU).unwrap();
    assert_eq!(same.forward(&y).unwrap().shape(), vec![2, 1, 5]);
}

#[test]
fn conv1d_module_equals_functional() {
    let opts = Conv1dOptions {
        stride: 2,
        padding: Padding1d::Explicit(2),
        dilation: 2,
        groups: 3,
    };
    let conv = Conv1d::new(3, 6, 3).options(opts).build().unwrap();
    let ps = conv.parameters().unwrap();
    let x = Tensor::randn(&[2, 3, 11], DType::Float32, Device::CPU).unwrap();
    let m = conv.forward(&x).unwrap();
    let f = x.conv1d(&ps[0], Some(&ps[1]), &opts).unwrap();
    assert_eq!(m.shape(), vec![2, 6, 6]);
    assert_eq!(m.shape(), f.shape());
    assert_eq!(m.to_vec::<f32>().unwrap(), f.to_vec::<f32>().unwrap());
}

#[test]
fn conv1d_module_errors() {
    let conv = Conv1d::new(4, 2, 3).build().unwrap();
    let wrong = Tensor::randn(&[1, 3, 8], DType::Float32, Device::CPU).unwrap();
    let e = conv.forward(&wrong).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("Conv1d"), "{}", e.message);
    let small = Tensor::randn(&[1, 4, 2], DType::Float32, Device::CPU).unwrap();
    let e = conv.forward(&small).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("Conv1d"), "{}", e.message);
    let e = Conv1d::new(1, 1, 3)
        .padding(Padding1d::Same)
        .stride(2)
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Conv1d::new(3, 2, 3).groups(2).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Conv1d::new(1, 1, 0).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = Conv1d::new(1, 1, 3).dtype(DType::Int64).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);
}

#[test]
fn conv1d_functional_values() {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4], Device::CPU).unwrap();
    let w = Tensor::ones(&[1, 1, 2], DType::Float32, Device::CPU).unwrap();
    let y = x.conv1d(&w, None, &Conv1dOptions::default()).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 3]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0]);

    let strided = Conv1dOptions {
        stride: 2,
        ..Conv1dOptions::default()
    };
    let y = x.conv1d(&w, None, &strided).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 7.0]);

    // padded to [0, 1, 2, 3, 4, 0], plus a bias of 0.5
    let b = Tensor::from_slice(&[0.5f32], &[1], Device::CPU).unwrap();
    let padded = Conv1dOptions {
        padding: Padding1d::Explicit(1),
        ..Conv1dOptions::default()
    };
    let y = x.conv1d(&w, Some(&b), &padded).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.5, 3.5, 5.5, 7.5, 4.5]);

    let dilated = Conv1dOptions {
        dilation: 2,
        ..Conv1dOptions::default()
    };
    let y = x.conv1d(&w, None, &dilated).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0 + 3.0, 2.0 + 4.0]);

    // "same" with an even kernel: the extra zero at the end
    let same = Conv1dOptions {
        padding: Padding1d::Same,
        ..Conv1dOptions::default()
    };
    let y = x.conv1d(&w, None, &same).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0, 4.0]);

    let big = Tensor::ones(&[1, 1, 5], DType::Float32, Device::CPU).unwrap();
    let e = x.conv1d(&big, None, &Conv1dOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    let w4 = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU).unwrap();
    let e = x.conv1d(&w4, None, &Conv1dOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    let w2 = Tensor::ones(&[1, 2, 2], DType::Float32, Device::CPU).unwrap();
    let e = x.conv1d(&w2, None, &Conv1dOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
}

// [[1, 2], [3, 4]] as [1, 1, 2, 2]
fn x2x2() -> Tensor {
    Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2], Device::CPU).unwrap()
}

// [[1, 2, 3], [4, 5, 6], [7, 8, 9]] as [1, 1, 3, 3]
fn x3x3() -> Tensor {
    Tensor::arange(1.0, 10.0, 1.0, DType::Float32, Device::CPU)
        .unwrap()
        .reshape(&[1, 1, 3, 3])
        .unwrap()
}

#[test]
fn conv_transpose2d_functional_values() {
    let x = x2x2();
    let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU).unwrap();

    // Each input element adds a 2x2 block of itself at its position; stride 1 overlaps
    // them: the centre is 1 + 2 + 3 + 4.
    let y = x
        .conv_transpose2d(&w, None, &ConvTranspose2dOptions::default())
        .unwrap();
    assert_eq!(y.shape(), vec![1, 1, 3, 3]);
    #[rustfmt::skip]
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![
        1.0, 3.0, 2.0,
        4.0, 10.0, 6.0,
        3.0, 7.0, 4.0,
    ]);

    // stride 2: the blocks side by side, (2 - 1) * 2 + 2 = 4
    let s2 = ConvTranspose2dOptions {
        stride: (2, 2),
        ..ConvTranspose2dOptions::default()
    };
    let y = x.conv_transpose2d(&w, None, &s2).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 4, 4]);
    #[rustfmt::skip]
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![
        1.0, 1.0, 2.0, 2.0,
        1.0, 1.0, 2.0, 2.0,
        3.0, 3.0, 4.0, 4.0,
        3.0, 3.0, 4.0, 4.0,
    ]);

    // output_padding 1: a zero row at the bottom and a zero column at the right
    let op = ConvTranspose2dOptions {
        output_padding: (1, 1),
        ..s2
    };
    let y = x.conv_transpose2d(&w, None, &op).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 5, 5]);
    #[rustfmt::skip]
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![
        1.0, 1.0, 2.0, 2.0, 0.0,
        1.0, 1.0, 2.0, 2.0, 0.0,
        3.0, 3.0, 4.0, 4.0, 0.0,
        3.0, 3.0, 4.0, 4.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0,
    ]);
    // only along the width: [1, 1, 4, 5]
    let op_w = ConvTranspose2dOptions {
        output_padding: (0, 1),
        ..s2
    };
    let y = x.conv_transpose2d(&w, None, &op_w).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 4, 5]);

    // the bias is added everywhere
    let b = Tensor::from_slice(&[0.5f32], &[1], Device::CPU).unwrap();
    let y = x
        .conv_transpose2d(&w, Some(&b), &ConvTranspose2dOptions::default())
        .unwrap();
    #[rustfmt::skip]
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![
        1.5, 3.5, 2.5,
        4.5, 10.5, 6.5,
        3.5, 7.5, 4.5,
    ]);

    // padding 1 takes a row and a column off each side of the stride-2 output
    let p1 = ConvTranspose2dOptions {
        padding: (1, 1),
        ..s2
    };
    let y = x.conv_transpose2d(&w, None, &p1).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);

    // dilation 2: the kernel's ones 2 apart, so the copies of x interleave without overlap
    let d2 = ConvTranspose2dOptions {
        dilation: (2, 2),
        ..ConvTranspose2dOptions::default()
    };
    let y = x.conv_transpose2d(&w, None, &d2).unwrap();
    #[rustfmt::skip]
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![
        1.0, 2.0, 1.0, 2.0,
        3.0, 4.0, 3.0, 4.0,
        1.0, 2.0, 1.0, 2.0,
        3.0, 4.0, 3.0, 4.0,
    ]);

    // unbatched [C, H, W]
    let y = x
        .reshape(&[1, 2, 2])
        .unwrap()
        .conv_transpose2d(&w, None, &ConvTranspose2dOptions::default())
        .unwrap();
    assert_eq!(y.shape(), vec![1, 3, 3]);
}

#[test]
fn conv_transpose2d_functional_errors() {
    let x = x2x2();
    let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU).unwrap();
    // output_padding must be smaller than the stride (or the dilation)
    let too_much = ConvTranspose2dOptions {
        output_padding: (1, 1),
        ..ConvTranspose2dOptions::default()
    };
    let e = x.conv_transpose2d(&w, None, &too_much).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = x
        .conv_transpose2d(
            &w,
            None,
            &ConvTranspose2dOptions {
                stride: (2, 2),
                output_padding: (2, 0),
                ..ConvTranspose2dOptions::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);

    // weight [in, out / groups, kh, kw]: an input of 1 channel against a weight for 2
    let w2 = Tensor::ones(&[2, 1, 2, 2], DType::Float32, Device::CPU).unwrap();
    let e = x
        .conv_transpose2d(&w2, None, &ConvTranspose2dOptions::default())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("[2, 1, 2, 2]"), "{}", e.message);
    assert!(e.message.contains("[1, 1, 2, 2]"), "{}", e.message);

    // a bias of the wrong size
    let b2 = Tensor::zeros(&[2], DType::Float32, Device::CPU).unwrap();
    let e = x
        .conv_transpose2d(&w, Some(&b2), &ConvTranspose2dOptions::default())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);

    let w64 = Tensor::ones(&[1, 1, 2, 2], DType::Float64, Device::CPU).unwrap();
    let e = x
        .conv_transpose2d(&w64, None, &ConvTranspose2dOptions::default())
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);
}

#[test]
fn conv_transpose2d_module_shapes_and_names() {
    let up = ConvTranspose2d::new(4, 6, (3, 2))
        .stride((2, 2))
        .padding((1, 1))
        .output_padding((1, 1))
        .groups(2)
        .dilation((1, 1))
        .build()
        .unwrap();
    let ps = up.named_parameters().unwrap();
    let names: Vec<&str> = ps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["weight", "bias"]);
    // [in, out / groups, kh, kw], as PyTorch's
    assert_eq!(ps[0].1.shape(), vec![4, 3, 3, 2]);
    assert_eq!(ps[1].1.shape(), vec![6]);
    let sd = up.state_dict().unwrap();
    assert_eq!(sd.names().unwrap(), ["weight", "bias"]);
    assert_eq!(sd.get("weight").unwrap().unwrap().shape(), vec![4, 3, 3, 2]);
    assert_eq!(sd.get("bias").unwrap().unwrap().shape(), vec![6]);
    // (5 - 1) * 2 - 2 + (3 - 1) + 1 + 1 = 10, (7 - 1) * 2 - 2 + (2 - 1) + 1 + 1 = 13
    let x = Tensor::randn(&[2, 4, 5, 7], DType::Float32, Device::CPU).unwrap();
    assert_eq!(up.forward(&x).unwrap().shape(), vec![2, 6, 10, 13]);
    let x3 = Tensor::randn(&[4, 5, 7], DType::Float32, Device::CPU).unwrap();
    assert_eq!(up.forward(&x3).unwrap().shape(), vec![6, 10, 13]);

    let plain = ConvTranspose2d::new(1, 2, (2, 2))
        .bias(false)
        .dtype(DType::Float64)
        .device(Device::CPU)
        .build()
        .unwrap();
    let ps = plain.parameters().unwrap();
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].dtype(), DType::Float64);
    assert_eq!(ps[0].shape(), vec![1, 2, 2, 2]);
}

#[test]
fn conv_transpose2d_module_equals_functional() {
    let opts = ConvTranspose2dOptions {
        stride: (2, 3),
        padding: (1, 0),
        output_padding: (1, 2),
        groups: 3,
        dilation: (1, 2),
    };
    let up = ConvTranspose2d::new(3, 6, (3, 2))
        .options(opts)
        .build()
        .unwrap();
    let ps = up.parameters().unwrap();
    let x = Tensor::randn(&[2, 3, 4, 5], DType::Float32, Device::CPU).unwrap();
    let m = up.forward(&x).unwrap();
    let f = x.conv_transpose2d(&ps[0], Some(&ps[1]), &opts).unwrap();
    // (4 - 1) * 2 - 2 + 2 + 1 + 1 = 8, (5 - 1) * 3 - 0 + 2 + 2 + 1 = 17
    assert_eq!(m.shape(), vec![2, 6, 8, 17]);
    assert_eq!(m.shape(), f.shape());
    assert_eq!(m.to_vec::<f32>().unwrap(), f.to_vec::<f32>().unwrap());

    // the module with its weight set to ones gives the hand-computed values above
    let mut ones = ConvTranspose2d::new(1, 1, (2, 2))
        .bias(false)
        .build()
        .unwrap();
    let w = Tensor::ones(&[1, 1, 2, 2], DType::Float32, Device::CPU).unwrap();
    let sd = devtensor::StateDict::from_pairs([("weight", &w)]).unwrap();
    ones.load_state_dict(&sd).unwrap();
    assert_eq!(
        ones.forward(&x2x2()).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0]
    );
}

#[test]
fn conv_transpose2d_module_errors() {
    let up = ConvTranspose2d::new(4, 2, (3, 3))
        .stride((2, 2))
        .padding((1, 1))
        .output_padding((1, 1))
        .build()
        .unwrap();
    let wrong = Tensor::zeros(&[1, 3, 5, 5], DType::Float32, Device::CPU).unwrap();
    let e = up.forward(&wrong).unwrap_err();
    assert_eq!(e.code, ErrorCode::ShapeMismatch);
    assert!(e.message.contains("ConvTranspose2d"), "{}", e.message);
    assert!(e.message.contains("[1, 3, 5, 5]"), "{}", e.message);
    let f64 = Tensor::zeros(&[4, 3, 3], DType::Float64, Device::CPU).unwrap();
    let e = up.forward(&f64).unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);

    // output_padding >= stride (and dilation)
    let e = ConvTranspose2d::new(1, 1, (3, 3))
        .output_padding((1, 1))
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = ConvTranspose2d::new(4, 4, (3, 3))
        .stride((2, 2))
        .output_padding((2, 2))
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = ConvTranspose2d::new(4, 6, (3, 3))
        .groups(4)
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = ConvTranspose2d::new(1, 1, (0, 3)).build().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = ConvTranspose2d::new(1, 1, (3, 3))
        .padding((-1, 0))
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = ConvTranspose2d::new(1, 1, (3, 3))
        .dtype(DType::Int64)
        .build()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::DtypeMismatch);

    // a state dict from a Conv2d of the same channels: the weight's shape is transposed
    let conv = Conv2d::new(4, 2, (3, 3)).build().unwrap();
    let mut up = up;
    let e = up.load_state_dict(&conv.state_dict().unwrap()).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("weight"), "{}", e.message);
}

#[test]
fn pooling_ceil_mode_values() {
    let x = x3x3();
    // kernel 2, stride 2 on 3x3: one whole window, or with ceil_mode also the windows
    // hanging over the right and bottom edges, which take only the elements inside.
    let floor = x.max_pool2d((2, 2), &MaxPool2dOptions::default()).unwrap();
    assert_eq!(floor.shape(), vec![1, 1, 1, 1]);
    assert_eq!(floor.to_vec::<f32>().unwrap(), vec![5.0]);
    let ceil = MaxPool2dOptions {
        stride: Some((2, 2)),
        ceil_mode: true,
        ..MaxPool2dOptions::default()
    };
    let y = x.max_pool2d((2, 2), &ceil).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 6.0, 8.0, 9.0]);

    let floor = x.avg_pool2d((2, 2), &AvgPool2dOptions::default()).unwrap();
    assert_eq!(floor.to_vec::<f32>().unwrap(), vec![3.0]);
    // (1 + 2 + 4 + 5) / 4, (3 + 6) / 2, (7 + 8) / 2, 9 / 1
    let ceil = AvgPool2dOptions {
        stride: Some((2, 2)),
        ceil_mode: true,
        ..AvgPool2dOptions::default()
    };
    let y = x.avg_pool2d((2, 2), &ceil).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 4.5, 7.5, 9.0]);

    // padding 1: ceil((3 + 2 - 2) / 2) + 1 = 3 windows, but the third would start at 4,
    // past the input and its left padding, so PyTorch drops it: 2x2. The padding counts
    // in the mean (count_include_pad), the overhang never does.
    let padded = AvgPool2dOptions {
        padding: (1, 1),
        ..ceil
    };
    let y = x.avg_pool2d((2, 2), &padded).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.25, 1.25, 2.75, 7.0]);
    let exclude = AvgPool2dOptions {
        count_include_pad: false,
        ..padded
    };
    let y = x.avg_pool2d((2, 2), &exclude).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 2.5, 5.5, 7.0]);
    let padded = MaxPool2dOptions {
        padding: (1, 1),
        ..ceil_max()
    };
    let y = x.max_pool2d((2, 2), &padded).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 7.0, 9.0]);
}

fn ceil_max() -> MaxPool2dOptions {
    MaxPool2dOptions {
        stride: Some((2, 2)),
        ceil_mode: true,
        ..MaxPool2dOptions::default()
    }
}

#[test]
fn pooling_ceil_mode_modules() {
    let x = x3x3();
    let floor = MaxPool2d::new((2, 2)).stride((2, 2)).build().unwrap();
    assert_eq!(
        floor.forward(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![5.0]
    );
    let ceil = MaxPool2d::new((2, 2))
        .stride((2, 2))
        .ceil_mode(true)
        .build()
        .unwrap();
    let y = ceil.forward(&x).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 6.0, 8.0, 9.0]);
    assert!(ceil.parameters().unwrap().is_empty());

    let floor = AvgPool2d::new((2, 2)).stride((2, 2)).build().unwrap();
    assert_eq!(
        floor.forward(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![3.0]
    );
    let ceil = AvgPool2d::new((2, 2))
        .stride((2, 2))
        .ceil_mode(true)
        .build()
        .unwrap();
    let y = ceil.forward(&x).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 2, 2]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 4.5, 7.5, 9.0]);

    // the module passes ceil_mode with the other options: padding 1 as above
    let padded = AvgPool2d::new((2, 2))
        .stride((2, 2))
        .padding((1, 1))
        .ceil_mode(true)
        .count_include_pad(false)
        .build()
        .unwrap();
    assert_eq!(
        padded.forward(&x).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 2.5, 5.5, 7.0]
    );
    // the gradient of ceil_mode max pooling reaches the edge windows' maxima
    let xg = x3x3();
    xg.set_requires_grad(true).unwrap();
    let y = xg.max_pool2d((2, 2), &ceil_max()).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(
        xg.grad().unwrap().unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    );
}
