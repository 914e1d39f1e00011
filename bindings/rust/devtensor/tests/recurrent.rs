//! Recurrent layers (dt_rnn_new, dt_lstm_new, dt_gru_new through the Rnn, Lstm and Gru
//! builders, and dt_rnn_forward through Module::rnn_forward): the shapes of output, h_n
//! and c_n, an RNN and a GRU computed by hand in float64, PyTorch's parameter names, the
//! settings reaching the library, gradients (by hand and by finite differences), and the
//! errors. Each test runs alone and checks that it leaves no handle behind.
use devtensor::nn::{Gru, Lstm, Module, Rnn, RnnNonlinearity};
use devtensor::{DType, Device, ErrorCode, StateDict, Tensor};

mod common;
use common::assert_near;
use common::leak_checked;

fn f64s(data: &[f64], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn param_names(m: &Module) -> Vec<String> {
    m.named_parameters().unwrap().into_iter().map(|(n, _)| n).collect()
}

/// `m` loaded with `pairs` (every parameter must be named: load_state_dict is strict).
fn load(m: &mut Module, pairs: &[(&str, &[f64], &[i64])]) {
    let sd = StateDict::from_pairs(pairs.iter().map(|(n, d, s)| (*n, f64s(d, s)))).unwrap();
    m.load_state_dict(&sd).unwrap();
}

/// RNN(tanh), input and hidden size 1, float64, weight_ih 0.5, weight_hh 0.25, bias_ih
/// 0.1, bias_hh 0: h' = tanh(0.5 x + 0.1 + 0.25 h).
fn hand_rnn() -> Module {
    let mut rnn = Rnn::new(1, 1).dtype(DType::Float64).build().unwrap();
    load(
        &mut rnn,
        &[
            ("weight_ih_l0", &[0.5], &[1, 1]),
            ("weight_hh_l0", &[0.25], &[1, 1]),
            ("bias_ih_l0", &[0.1], &[1]),
            ("bias_hh_l0", &[0.0], &[1]),
        ],
    );
    rnn
}

#[test]
fn lstm_shapes_two_layers_bidirectional_batch_first() {
    leak_checked(|| {
        let (input, hidden, n, l) = (3i64, 4i64, 2i64, 5i64);
        let lstm = Lstm::new(input, hidden)
            .num_layers(2)
            .bidirectional(true)
            .batch_first(true)
            .dtype(DType::Float64)
            .build()
            .unwrap();
        assert_eq!(lstm.kind().unwrap(), "LSTM");
        let x = Tensor::randn(&[n, l, input], DType::Float64, Device::CPU).unwrap(); // [N, L, in]
        let (out, h_n, c_n) = lstm.rnn_forward(&x, None, None).unwrap();
        let c_n = c_n.expect("an LSTM gives c_n");
        assert_eq!(out.shape(), vec![n, l, 2 * hidden]); // [N, L, D * H]
        assert_eq!(h_n.shape(), vec![4, n, hidden]); // [layers * D, N, H]: batch in the middle
        assert_eq!(c_n.shape(), vec![4, n, hidden]);

        // The last layer's forward state is the output's last step (first half), its
        // backward state the output's first step (second half).
        let (o, h) = (vals(&out), vals(&h_n));
        let at_out = |b: i64, t: i64, k: i64| o[((b * l + t) * 2 * hidden + k) as usize];
        let at_h = |r: i64, b: i64, k: i64| h[((r * n + b) * hidden + k) as usize];
        for b in 0..n {
            for k in 0..hidden {
                assert_eq!(at_h(2, b, k), at_out(b, l - 1, k), "layer 1 forward, batch {b}");
                assert_eq!(at_h(3, b, k), at_out(b, 0, hidden + k), "layer 1 backward, batch {b}");
            }
        }

        // forward and forward_with give the same output.
        assert_eq!(vals(&lstm.forward(&x).unwrap()), o);
        let zeros = Tensor::zeros(&[4, n, hidden], DType::Float64, Device::CPU).unwrap();
        let y = lstm.forward_with(&[Some(&x), Some(&zeros), Some(&zeros)]).unwrap();
        assert_eq!(vals(&y), o);
        // Given states are used: the given h_n and c_n as the next call's h0 and c0.
        let (out2, h2, c2) = lstm.rnn_forward(&x, Some(&h_n), Some(&c_n)).unwrap();
        assert_eq!(out2.shape(), out.shape());
        assert_eq!(h2.shape(), h_n.shape());
        assert_eq!(c2.unwrap().shape(), c_n.shape());
        assert_ne!(vals(&out2), o);

        // Unbatched [L, in]: output [L, D * H], states [layers * D, H].
        let x1 = Tensor::randn(&[l, input], DType::Float64, Device::CPU).unwrap();
        let (out, h_n, c_n) = lstm.rnn_forward(&x1, None, None).unwrap();
        assert_eq!(out.shape(), vec![l, 2 * hidden]);
        assert_eq!(h_n.shape(), vec![4, hidden]);
        assert_eq!(c_n.unwrap().shape(), vec![4, hidden]);

        // Sequence-first (the default): [L, N, in] -> [L, N, D * H].
        let seq = Lstm::new(input, hidden).num_layers(3).build().unwrap();
        let x = Tensor::randn(&[l, n, input], DType::Float32, Device::CPU).unwrap();
        let (out, h_n, c_n) = seq.rnn_forward(&x, None, None).unwrap();
        assert_eq!(out.shape(), vec![l, n, hidden]);
        assert_eq!(h_n.shape(), vec![3, n, hidden]);
        assert_eq!(c_n.unwrap().shape(), vec![3, n, hidden]);
    });
}

#[test]
fn rnn_tanh_by_hand() {
    leak_checked(|| {
        let rnn = hand_rnn();
        assert_eq!(rnn.kind().unwrap(), "RNN");
        let h1 = 0.6f64.tanh();
        let h2 = (0.5 * 2.0 + 0.1 + 0.25 * h1).tanh();
        // Unbatched input [L = 2, input_size = 1], h0 zeros.
        let x = f64s(&[1.0, 2.0], &[2, 1]);
        let (out, h_n, c_n) = rnn.rnn_forward(&x, None, None).unwrap();
        assert!(c_n.is_none());
        assert_eq!(out.shape(), vec![2, 1]);
        assert_eq!(h_n.shape(), vec![1, 1]);
        assert_near("output", &vals(&out), &[h1, h2], 1e-12);
        assert_near("h_n", &vals(&h_n), &[h2], 1e-12);
        // h0 zeros given explicitly: the same.
        let (out0, _, _) = rnn.rnn_forward(&x, Some(&f64s(&[0.0], &[1, 1])), None).unwrap();
        assert_near("explicit zero h0", &vals(&out0), &[h1, h2], 1e-12);
        // h0 = 1: h1 = tanh(0.6 + 0.25).
        let (out1, _, _) = rnn.rnn_forward(&x, Some(&f64s(&[1.0], &[1, 1])), None).unwrap();
        let g1 = 0.85f64.tanh();
        assert_near("h0 = 1", &vals(&out1), &[g1, (1.1 + 0.25 * g1).tanh()], 1e-12);
        // forward gives the output alone; batched [L, N = 1, 1] the same values.
        assert_near("forward", &vals(&rnn.forward(&x).unwrap()), &[h1, h2], 1e-12);
        let xb = f64s(&[1.0, 2.0], &[2, 1, 1]);
        let (outb, h_nb, _) = rnn.rnn_forward(&xb, None, None).unwrap();
        assert_eq!(outb.shape(), vec![2, 1, 1]);
        assert_eq!(h_nb.shape(), vec![1, 1, 1]);
        assert_near("batched", &vals(&outb), &[h1, h2], 1e-12);

        // The relu cell with the same weights: relu(0.6) = 0.6, relu(1.1 + 0.15).
        let mut relu = Rnn::new(1, 1)
            .nonlinearity(RnnNonlinearity::Relu)
            .dtype(DType::Float64)
            .build()
            .unwrap();
        load(
            &mut relu,
            &[
                ("weight_ih_l0", &[0.5], &[1, 1]),
                ("weight_hh_l0", &[0.25], &[1, 1]),
                ("bias_ih_l0", &[0.1], &[1]),
                ("bias_hh_l0", &[0.0], &[1]),
            ],
        );
        let (out, h_n, _) = relu.rnn_forward(&f64s(&[1.0, 2.0, -8.0], &[3, 1]), None, None).unwrap();
        // Step 3: 0.5 * -8 + 0.1 + 0.25 * 1.25 < 0: relu gives 0.
        assert_near("relu output", &vals(&out), &[0.6, 1.25, 0.0], 1e-12);
        assert_near("relu h_n", &vals(&h_n), &[0.0], 1e-12);
    });
}

#[test]
fn gru_one_step_by_hand() {
    leak_checked(|| {
        // Gates stacked r, z, n: weight_ih [3, 1], weight_hh [3, 1], biases [3].
        let (w_ir, w_iz, w_in) = (0.5, -1.0, 2.0);
        let (w_hr, w_hz, w_hn) = (0.3, 0.7, -0.4);
        let (b_ir, b_iz, b_in) = (0.1, 0.2, -0.3);
        let (b_hr, b_hz, b_hn) = (0.05, -0.15, 0.25);
        let mut gru = Gru::new(1, 1).dtype(DType::Float64).build().unwrap();
        assert_eq!(gru.kind().unwrap(), "GRU");
        load(
            &mut gru,
            &[
                ("weight_ih_l0", &[w_ir, w_iz, w_in], &[3, 1]),
                ("weight_hh_l0", &[w_hr, w_hz, w_hn], &[3, 1]),
                ("bias_ih_l0", &[b_ir, b_iz, b_in], &[3]),
                ("bias_hh_l0", &[b_hr, b_hz, b_hn], &[3]),
            ],
        );
        let x = 0.8f64;
        let xs = f64s(&[x], &[1, 1, 1]); // [L = 1, N = 1, input_size = 1]

        // h0 = 0: r = σ(w_ir x + b_ir + b_hr), z = σ(w_iz x + b_iz + b_hz),
        // n = tanh(w_in x + b_in + r b_hn), h = (1 - z) n.
        let r = sigmoid(w_ir * x + b_ir + b_hr);
        let z = sigmoid(w_iz * x + b_iz + b_hz);
        let n = (w_in * x + b_in + r * b_hn).tanh();
        let h = (1.0 - z) * n;
        let (out, h_n, c_n) = gru.rnn_forward(&xs, None, None).unwrap();
        assert!(c_n.is_none());
        assert_eq!(out.shape(), vec![1, 1, 1]);
        assert_eq!(h_n.shape(), vec![1, 1, 1]);
        assert_near("output, h0 = 0", &vals(&out), &[h], 1e-12);
        assert_near("h_n, h0 = 0", &vals(&h_n), &[h], 1e-12);

        // h0 = 0.5: the recurrent weights too, r multiplying W_hn h + b_hn, and z h0 kept.
        let h0 = 0.5f64;
        let r = sigmoid(w_ir * x + b_ir + w_hr * h0 + b_hr);
        let z = sigmoid(w_iz * x + b_iz + w_hz * h0 + b_hz);
        let n = (w_in * x + b_in + r * (w_hn * h0 + b_hn)).tanh();
        let h = (1.0 - z) * n + z * h0;
        let (out, h_n, _) = gru.rnn_forward(&xs, Some(&f64s(&[h0], &[1, 1, 1])), None).unwrap();
        assert_near("output, h0 = 0.5", &vals(&out), &[h], 1e-12);
        assert_near("h_n, h0 = 0.5", &vals(&h_n), &[h], 1e-12);
        // forward_with([input, h0]) gives the same output.
        let y = gru.forward_with(&[Some(&xs), Some(&f64s(&[h0], &[1, 1, 1]))]).unwrap();
        assert_near("forward_with", &vals(&y), &[h], 1e-12);
    });
}

#[test]
fn lstm_parameter_names_and_shapes() {
    leak_checked(|| {
        let (input, hidden) = (3i64, 5i64);
        let lstm = Lstm::new(input, hidden).num_layers(2).bidirectional(true).build().unwrap();
        let want: Vec<String> = ["l0", "l0_reverse", "l1", "l1_reverse"]
            .iter()
            .flat_map(|s| {
                ["weight_ih", "weight_hh", "bias_ih", "bias_hh"].map(|p| format!("{p}_{s}"))
            })
            .collect();
        assert_eq!(want[..5], ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse"]);
        assert_eq!(param_names(&lstm), want);
        assert_eq!(lstm.state_dict().unwrap().names().unwrap(), want); // no buffers
        let shapes: Vec<Vec<i64>> = lstm.parameters().unwrap().iter().map(|t| t.shape()).collect();
        let g = 4 * hidden;
        let layer0 = [vec![g, input], vec![g, hidden], vec![g], vec![g]];
        let layer1 = [vec![g, 2 * hidden], vec![g, hidden], vec![g], vec![g]]; // in: D * H
        let want_shapes: Vec<Vec<i64>> =
            [&layer0, &layer0, &layer1, &layer1].iter().flat_map(|l| l.iter().cloned()).collect();
        assert_eq!(shapes, want_shapes);
        // PyTorch's initialisation: uniform in ±1/sqrt(hidden_size), requiring grad.
        let bound = 1.0 / (hidden as f64).sqrt();
        for p in lstm.parameters().unwrap() {
            assert!(p.requires_grad());
            let v = p.to_dtype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            assert!(v.iter().all(|x| x.abs() <= bound + 1e-6), "{v:?} beyond ±{bound}");
        }

        // Without bias: the weights alone. GRU: 3 gates; RNN: 1.
        let nb = Lstm::new(input, hidden).bias(false).build().unwrap();
        assert_eq!(param_names(&nb), ["weight_ih_l0", "weight_hh_l0"]);
        let gru = Gru::new(input, hidden).build().unwrap();
        assert_eq!(gru.parameters().unwrap()[0].shape(), vec![3 * hidden, input]);
        let rnn = Rnn::new(input, hidden).bidirectional(true).build().unwrap();
        assert_eq!(
            param_names(&rnn),
            [
                "weight_ih_l0",
                "weight_hh_l0",
                "bias_ih_l0",
                "bias_hh_l0",
                "weight_ih_l0_reverse",
                "weight_hh_l0_reverse",
                "bias_ih_l0_reverse",
                "bias_hh_l0_reverse"
            ]
        );
        assert_eq!(rnn.parameters().unwrap()[1].shape(), vec![hidden, hidden]);
        // dtype reaches the parameters.
        let f64_gru = Gru::new(2, 2).dtype(DType::Float64).build().unwrap();
        assert!(f64_gru.parameters().unwrap().iter().all(|p| p.dtype() == DType::Float64));
    });
}

#[test]
fn dropout_applies_between_layers_in_training_only() {
    leak_checked(|| {
        // dropout = 1: in training mode layer 1 reads zeros, so the output does not
        // depend on the input; in eval mode it does.
        let mut rnn = Rnn::new(2, 3).num_layers(2).dropout(1.0).dtype(DType::Float64).build().unwrap();
        let a = Tensor::randn(&[4, 2], DType::Float64, Device::CPU).unwrap();
        let b = Tensor::randn(&[4, 2], DType::Float64, Device::CPU).unwrap();
        assert_eq!(vals(&rnn.forward(&a).unwrap()), vals(&rnn.forward(&b).unwrap()));
        rnn.eval().unwrap();
        assert_ne!(vals(&rnn.forward(&a).unwrap()), vals(&rnn.forward(&b).unwrap()));
        // One layer: nothing to drop, training or not.
        let one = Gru::new(2, 3).dropout(1.0).dtype(DType::Float64).build().unwrap();
        assert_ne!(vals(&one.forward(&a).unwrap()), vals(&one.forward(&b).unwrap()));
    });
}

#[test]
fn errors() {
    leak_checked(|| {
        let lstm = Lstm::new(3, 4).build().unwrap();
        let gru = Gru::new(3, 4).build().unwrap();
        let x = Tensor::randn(&[5, 2, 3], DType::Float32, Device::CPU).unwrap();

        // A last dim other than input_size.
        let wide = Tensor::randn(&[5, 2, 7], DType::Float32, Device::CPU).unwrap();
        for e in [lstm.forward(&wide).unwrap_err(), lstm.rnn_forward(&wide, None, None).unwrap_err()] {
            assert_eq!(e.code, ErrorCode::ShapeMismatch);
            assert!(e.message.contains("input_size"), "{}", e.message);
            assert!(e.message.contains("LSTM"), "{}", e.message);
        }
        // 1-d and 4-d inputs, an empty sequence.
        for shape in [&[3i64][..], &[1, 5, 2, 3], &[0, 2, 3]] {
            let bad = Tensor::zeros(shape, DType::Float32, Device::CPU).unwrap();
            let e = gru.rnn_forward(&bad, None, None).unwrap_err();
            assert_eq!(e.code, ErrorCode::ShapeMismatch, "{shape:?}: {}", e.message);
        }
        // Another dtype than the parameters'.
        let x64 = Tensor::randn(&[5, 2, 3], DType::Float64, Device::CPU).unwrap();
        assert_eq!(gru.rnn_forward(&x64, None, None).unwrap_err().code, ErrorCode::DtypeMismatch);

        // States: the wrong shape (the message names it), h0 without c0 for an LSTM.
        let h_bad = Tensor::zeros(&[2, 2, 4], DType::Float32, Device::CPU).unwrap();
        let e = gru.rnn_forward(&x, Some(&h_bad), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("h0"), "{}", e.message);
        let h0 = Tensor::zeros(&[1, 2, 4], DType::Float32, Device::CPU).unwrap();
        let e = lstm.rnn_forward(&x, Some(&h0), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = lstm.rnn_forward(&x, None, Some(&h0)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        lstm.rnn_forward(&x, Some(&h0), Some(&h0)).unwrap();

        // c0 is LSTM's alone: a GRU (or an RNN) given one fails.
        let e = gru.rnn_forward(&x, Some(&h0), Some(&h0)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("c0"), "{}", e.message);
        let rnn = Rnn::new(3, 4).build().unwrap();
        assert_eq!(rnn.rnn_forward(&x, None, Some(&h0)).unwrap_err().code, ErrorCode::InvalidArgument);
        // Through forward_with: a GRU takes at most [input, h0].
        let e = gru.forward_with(&[Some(&x), Some(&h0), Some(&h0)]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);

        // A module of another kind.
        let lin = Module::linear(3, 4, true, DType::Float32, Device::CPU).unwrap();
        let e = lin.rnn_forward(&x, None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("Linear"), "{}", e.message);

        // Invalid settings.
        let invalid = [
            Lstm::new(0, 4).build(),
            Lstm::new(3, 0).build(),
            Lstm::new(3, 4).num_layers(0).build(),
            Lstm::new(-1, 4).build(),
            Lstm::new(3, 4).dropout(-0.1).build(),
            Lstm::new(3, 4).dropout(1.5).build(),
            Lstm::new(3, 4).dropout(f64::NAN).build(),
            Gru::new(3, 4).num_layers(-2).build(),
            Gru::new(3, 4).dropout(2.0).build(),
            Rnn::new(3, -4).build(),
            Rnn::new(3, 4).nonlinearity(RnnNonlinearity::Relu).dropout(-1.0).build(),
            Lstm::new(i64::MAX, 4).build(),
            Gru::new(3, i64::MAX / 2).build(),
        ];
        for (i, r) in invalid.into_iter().enumerate() {
            let e = r.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "setting {i}: {}", e.message);
        }
        let e = Lstm::new(3, 0).build().unwrap_err();
        assert!(e.message.contains("hidden_size"), "{}", e.message);
        for r in [
            Lstm::new(3, 4).dtype(DType::Int64).build(),
            Gru::new(3, 4).dtype(DType::Int32).build(),
            Rnn::new(3, 4).dtype(DType::Bool).build(),
        ] {
            assert_eq!(r.unwrap_err().code, ErrorCode::DtypeMismatch);
        }
    });
}

#[test]
fn gradient_reaches_the_input() {
    leak_checked(|| {
        // The hand RNN: out = h1 + h2, h1 = tanh(0.5 x1 + 0.1), h2 = tanh(0.5 x2 + 0.1 +
        // 0.25 h1): d/dx2 = 0.5 (1 - h2²), d/dx1 = 0.5 (1 - h1²) (1 + 0.25 (1 - h2²)).
        let rnn = hand_rnn();
        let x = f64s(&[1.0, 2.0], &[2, 1]);
        x.set_requires_grad(true).unwrap();
        let (out, _, _) = rnn.rnn_forward(&x, None, None).unwrap();
        out.sum_all().unwrap().backward().unwrap();
        let h1 = 0.6f64.tanh();
        let h2 = (1.1 + 0.25 * h1).tanh();
        let d2 = 0.5 * (1.0 - h2 * h2);
        let d1 = 0.5 * (1.0 - h1 * h1) * (1.0 + 0.25 * (1.0 - h2 * h2));
        assert_near("dx", &vals(&x.grad().unwrap().unwrap()), &[d1, d2], 1e-12);
        // The recurrent weight's: d/dw_hh = (1 - h2²) h1 (h0 = 0).
        let w_hh = &rnn.named_parameters().unwrap()[1];
        assert_eq!(w_hh.0, "weight_hh_l0");
        assert_near("dW_hh", &vals(&w_hh.1.grad().unwrap().unwrap()), &[(1.0 - h2 * h2) * h1], 1e-12);

        // A 2-layer bidirectional LSTM and a GRU against central differences of
        // sum(output) + sum(h_n) (+ sum(c_n)), float64; every parameter gets a gradient.
        let lstm = Lstm::new(2, 3).num_layers(2).bidirectional(true).dtype(DType::Float64).build().unwrap();
        let gru = Gru::new(2, 3).num_layers(2).dtype(DType::Float64).build().unwrap();
        let data: Vec<f64> = (0..6).map(|i| ((i as f64) * 0.7).sin()).collect();
        let shape = [3i64, 1, 2]; // [L, N, input_size]
        for m in [&lstm, &gru] {
            let total = |d: &[f64], grad: bool| -> (f64, Option<Tensor>) {
                let x = f64s(d, &shape);
                if grad {
                    x.set_requires_grad(true).unwrap();
                }
                let (out, h_n, c_n) = m.rnn_forward(&x, None, None).unwrap();
                let mut s = (&out.sum_all().unwrap() + &h_n.sum_all().unwrap()).unwrap();
                if let Some(c) = c_n {
                    s = (&s + &c.sum_all().unwrap()).unwrap();
                }
                if grad {
                    s.backward().unwrap();
                }
                (s.item().unwrap(), grad.then_some(x))
            };
            let (_, x) = total(&data, true);
            let analytic = vals(&x.unwrap().grad().unwrap().expect("the input's gradient"));
            let eps = 1e-6;
            let numeric: Vec<f64> = (0..data.len())
                .map(|i| {
                    let (mut p, mut q) = (data.clone(), data.clone());
                    p[i] += eps;
                    q[i] -= eps;
                    (total(&p, false).0 - total(&q, false).0) / (2.0 * eps)
                })
                .collect();
            assert_near(&m.kind().unwrap(), &analytic, &numeric, 1e-7);
            for (name, p) in m.named_parameters().unwrap() {
                assert!(p.grad().unwrap().is_some(), "{name} has no gradient");
            }
        }
    });
}
