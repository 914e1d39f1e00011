//! Convolution and 2-d pooling (dt_conv1d, dt_conv2d, dt_*_pool2d and their modules):
//! shapes and parameter names, hand-computed values, and the errors.
use devtensor::nn::{
    AvgPool2d, AvgPool2dOptions, Conv1d, Conv1dOptions, Conv2d, Conv2dOptions, MaxPool2d,
    MaxPool2dOptions, Module, Padding, Padding1d,
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
