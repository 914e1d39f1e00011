//! Attention (dt_scaled_dot_product_attention, dt_multihead_attention_new,
//! dt_multihead_attention_forward through Module::multihead_attention_forward,
//! dt_transformer_encoder_layer_new, dt_transformer_encoder_new, and dt_module_forward's
//! optional inputs through Module::forward_with): hand-computed values and attention
//! weights, PyTorch's state_dict keys, the two mask polarities, masks that hide what they
//! should, and the errors. Each test runs alone and checks that it leaves no handle
//! behind.
use devtensor::nn::{
    Activation, LayerNorm, Module, MultiheadAttention, TransformerEncoder, TransformerEncoderLayer,
};
use devtensor::{DType, Device, ErrorCode, StateDict, Tensor};

mod common;
use common::assert_near;
use common::leak_checked;

fn f32s(data: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

fn bools(data: &[bool], shape: &[i64]) -> Tensor {
    Tensor::from_slice(data, shape, Device::CPU).unwrap()
}

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

fn names(sd: &StateDict) -> Vec<String> {
    sd.names().unwrap()
}

/// An identity matrix [n, n].
fn eye(n: usize) -> Tensor {
    let mut d = vec![0.0f32; n * n];
    for i in 0..n {
        d[i * n + i] = 1.0;
    }
    f32s(&d, &[n as i64, n as i64])
}

/// MultiheadAttention(2, heads) with identity projections and out_proj.bias `out_bias`:
/// its output is the attention of the raw query, key and value, plus the bias.
fn identity_mha(heads: i64, dropout: f64, out_bias: [f32; 2]) -> Module {
    let mut mha = MultiheadAttention::new(2, heads)
        .dropout(dropout)
        .build()
        .unwrap();
    let e = eye(2);
    let sd = StateDict::from_pairs([
        ("in_proj_weight", Tensor::cat(&[&e, &e, &e], 0).unwrap()),
        ("in_proj_bias", f32s(&[0.0; 6], &[6])),
        ("out_proj.weight", e.clone()),
        ("out_proj.bias", f32s(&out_bias, &[2])),
    ])
    .unwrap();
    mha.load_state_dict(&sd).unwrap();
    mha
}

/// Every Linear of `m` zeroed (the entries whose names hold no "norm").
fn zero_linears(m: &mut Module) {
    let zeroed: Vec<(String, Tensor)> = m
        .state_dict()
        .unwrap()
        .entries()
        .unwrap()
        .into_iter()
        .map(|(n, t)| {
            let z = if n.contains("norm") {
                t
            } else {
                t.zeros_like().unwrap()
            };
            (n, z)
        })
        .collect();
    m.load_state_dict(&StateDict::from_pairs(zeroed).unwrap())
        .unwrap();
}

#[test]
fn sdpa_values_by_hand() {
    leak_checked(|| {
        // Keys all zero: every score is 0, the weights uniform, the output the mean of
        // the value rows, whatever the query.
        let q = f32s(&[0.3, -2.0, 5.0, 1.0], &[2, 2]);
        let k = f32s(&[0.0; 6], &[3, 2]);
        let v = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
        let y = q.scaled_dot_product_attention(&k, &v, None, false).unwrap();
        assert_eq!(y.shape(), vec![2, 2]);
        assert_near("equal keys", &vals(&y), &[3.0, 4.0, 3.0, 4.0], 1e-5);

        // E = 1, scores q * k / 1 = 0 and ln 3: weights 1/4 and 3/4 of values 0 and 4.
        let q1 = f32s(&[1.0], &[1, 1]);
        let k1 = f32s(&[0.0, 3f32.ln()], &[2, 1]);
        let v1 = f32s(&[0.0, 4.0], &[2, 1]);
        let y = q1
            .scaled_dot_product_attention(&k1, &v1, None, false)
            .unwrap();
        assert_near("weights 1/4, 3/4", &vals(&y), &[3.0], 1e-5);
        // The scale is 1/sqrt(E): with E = 4 the same dot product ln 9 scores ln 3.
        let q4 = f32s(&[1.0, 1.0, 1.0, 1.0], &[1, 4]);
        let l = 9f32.ln() / 4.0;
        let k4 = f32s(&[0.0, 0.0, 0.0, 0.0, l, l, l, l], &[2, 4]);
        let y = q4
            .scaled_dot_product_attention(&k4, &v1, None, false)
            .unwrap();
        assert_near("scale 1/sqrt(E)", &vals(&y), &[3.0], 1e-5);

        // Causal: query i attends to keys 0..=i. Query 0 gives value row 0; with equal
        // keys query 1 the mean of rows 0 and 1, query 2 of all three.
        let q3 = f32s(&[9.0, -1.0, 2.0, 2.0, 0.5, 7.0], &[3, 2]);
        let y = q3.scaled_dot_product_attention(&k, &v, None, true).unwrap();
        assert_near("causal", &vals(&y), &[1.0, 2.0, 2.0, 3.0, 3.0, 4.0], 1e-5);
        // Causal with keys that differ: query 0 still sees value row 0 exactly.
        let kr = Tensor::randn(&[3, 2], DType::Float32, Device::CPU).unwrap();
        let y = q3
            .scaled_dot_product_attention(&kr, &v, None, true)
            .unwrap();
        assert_near("causal, first query", &vals(&y)[..2], &[1.0, 2.0], 1e-6);

        // A bool mask is TRUE where the query MAY attend (PyTorch's rule for SDPA).
        let allow = bools(&[true, false, true], &[1, 3]); // broadcast over the 2 queries
        let y = q
            .scaled_dot_product_attention(&k, &v, Some(&allow), false)
            .unwrap();
        assert_near("bool mask", &vals(&y), &[3.0, 4.0, 3.0, 4.0], 1e-5);
        let allow = bools(&[true, true, false, false, false, true], &[2, 3]);
        let y = q
            .scaled_dot_product_attention(&k, &v, Some(&allow), false)
            .unwrap();
        assert_near(
            "bool mask per query",
            &vals(&y),
            &[2.0, 3.0, 5.0, 6.0],
            1e-5,
        );
        // A float mask is added: -inf removes a key, ln 3 triples its weight.
        let add = f32s(&[0.0, f32::NEG_INFINITY, 3f32.ln()], &[3]);
        let y = q
            .scaled_dot_product_attention(&k, &v, Some(&add), false)
            .unwrap();
        // weights 1/4, 0, 3/4: (1 + 15) / 4, (2 + 18) / 4
        assert_near("float mask", &vals(&y), &[4.0, 5.0, 4.0, 5.0], 1e-5);
        // A query that may attend to nothing gives NaN, as PyTorch's.
        let none = bools(&[false, false, false], &[3]);
        let y = q
            .scaled_dot_product_attention(&k, &v, Some(&none), false)
            .unwrap();
        assert!(vals(&y).iter().all(|x| x.is_nan()));

        // Batched [B=2, L, E] with a shared key and value: each batch as alone.
        let qb = Tensor::stack(&[&q, &q], 0).unwrap();
        let kb = Tensor::stack(&[&k, &kr], 0).unwrap();
        let vb = Tensor::stack(&[&v, &v], 0).unwrap();
        let y = qb
            .scaled_dot_product_attention(&kb, &vb, None, false)
            .unwrap();
        assert_eq!(y.shape(), vec![2, 2, 2]);
        let alone = q
            .scaled_dot_product_attention(&kr, &v, None, false)
            .unwrap();
        assert!(y
            .narrow(0, 1, 1)
            .unwrap()
            .reshape(&[2, 2])
            .unwrap()
            .allclose(&alone)
            .unwrap());

        // Differentiable.
        let qg = Tensor::randn(&[2, 2], DType::Float32, Device::CPU).unwrap();
        qg.set_requires_grad(true).unwrap();
        let y = qg
            .scaled_dot_product_attention(&kr, &v, None, false)
            .unwrap();
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(qg.grad().unwrap().unwrap().shape(), vec![2, 2]);
    });
}

#[test]
fn sdpa_errors() {
    leak_checked(|| {
        let q = f32s(&[0.0; 4], &[2, 2]);
        let k = f32s(&[0.0; 6], &[3, 2]);
        let v = f32s(&[0.0; 6], &[3, 2]);
        let mask = bools(&[true; 3], &[3]);
        let e = q
            .scaled_dot_product_attention(&k, &v, Some(&mask), true)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message);
        let narrow_k = f32s(&[0.0; 3], &[3, 1]);
        let e = q
            .scaled_dot_product_attention(&narrow_k, &v, None, false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{}", e.message);
        let short_v = f32s(&[0.0; 4], &[2, 2]);
        let e = q
            .scaled_dot_product_attention(&k, &short_v, None, false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{}", e.message);
        let k64 = k.to_dtype(DType::Float64).unwrap();
        let e = q
            .scaled_dot_product_attention(&k64, &v, None, false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{}", e.message);
    });
}

#[test]
fn mha_shapes_names_and_options() {
    leak_checked(|| {
        let mha = MultiheadAttention::new(8, 2).build().unwrap();
        assert_eq!(mha.kind().unwrap(), "MultiheadAttention");
        let sd = mha.state_dict().unwrap();
        assert_eq!(
            names(&sd),
            [
                "in_proj_weight",
                "in_proj_bias",
                "out_proj.weight",
                "out_proj.bias"
            ]
        );
        let shape = |n: &str| sd.get(n).unwrap().unwrap().shape();
        assert_eq!(shape("in_proj_weight"), vec![24, 8]);
        assert_eq!(shape("in_proj_bias"), vec![24]);
        assert_eq!(shape("out_proj.weight"), vec![8, 8]);
        // PyTorch's initialisation: the biases zero, in_proj_weight xavier-uniform
        // (bound sqrt(6 / (8 + 24)) = 0.433).
        assert!(vals(&sd.get("in_proj_bias").unwrap().unwrap())
            .iter()
            .all(|x| *x == 0.0));
        assert!(vals(&sd.get("out_proj.bias").unwrap().unwrap())
            .iter()
            .all(|x| *x == 0.0));
        assert!(vals(&sd.get("in_proj_weight").unwrap().unwrap())
            .iter()
            .all(|x| x.abs() <= 0.4331));
        let children = mha.children().unwrap();
        assert_eq!(children[0].0, "out_proj");
        assert_eq!(children[0].1.kind().unwrap(), "Linear");

        // [L, N, E] -> [L, N, E]; cross-attention over S = 5 keys; unbatched [L, E].
        let q = Tensor::randn(&[3, 4, 8], DType::Float32, Device::CPU).unwrap();
        assert_eq!(mha.forward(&q).unwrap().shape(), vec![3, 4, 8]);
        let kv = Tensor::randn(&[5, 4, 8], DType::Float32, Device::CPU).unwrap();
        let y = mha.forward_with(&[Some(&q), Some(&kv), Some(&kv)]).unwrap();
        assert_eq!(y.shape(), vec![3, 4, 8]);
        let q2 = Tensor::randn(&[3, 8], DType::Float32, Device::CPU).unwrap();
        assert_eq!(mha.forward(&q2).unwrap().shape(), vec![3, 8]);

        // batch_first: [N, L, E].
        let bf = MultiheadAttention::new(8, 4)
            .batch_first(true)
            .build()
            .unwrap();
        let x = Tensor::randn(&[4, 3, 8], DType::Float32, Device::CPU).unwrap();
        assert_eq!(bf.forward(&x).unwrap().shape(), vec![4, 3, 8]);

        // No bias; float64.
        let nb = MultiheadAttention::new(4, 1)
            .bias(false)
            .dtype(DType::Float64)
            .device(Device::CPU)
            .build()
            .unwrap();
        let sd = nb.state_dict().unwrap();
        assert_eq!(names(&sd), ["in_proj_weight", "out_proj.weight"]);
        assert_eq!(
            sd.get("in_proj_weight").unwrap().unwrap().dtype(),
            DType::Float64
        );
        let x = Tensor::randn(&[2, 1, 4], DType::Float64, Device::CPU).unwrap();
        assert_eq!(nb.forward(&x).unwrap().dtype(), DType::Float64);
    });
}

#[test]
fn mha_values_masks_and_optional_inputs() {
    leak_checked(|| {
        let mha = identity_mha(1, 0.0, [10.0, 20.0]);
        let q = f32s(&[7.0, -3.0], &[1, 1, 2]); // [L=1, N=1, E=2]
        let k = f32s(&[0.0; 6], &[3, 1, 2]); // equal keys
        let v = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 1, 2]);
        // Uniform weights: the mean of the values (3, 4), plus out_proj.bias.
        let y = mha.forward_with(&[Some(&q), Some(&k), Some(&v)]).unwrap();
        assert_eq!(y.shape(), vec![1, 1, 2]);
        assert_near("mean of the values", &vals(&y), &[13.0, 24.0], 1e-5);
        // The module's bool masks are TRUE where attention is NOT allowed.
        let pad = bools(&[false, false, true], &[1, 3]); // [N, S]: key 2 is padding
        let y = mha
            .forward_with(&[Some(&q), Some(&k), Some(&v), Some(&pad)])
            .unwrap();
        assert_near("key_padding_mask", &vals(&y), &[12.0, 23.0], 1e-5);
        let am = bools(&[true, false, false], &[1, 3]); // [L, S]: key 0 hidden
        let y = mha
            .forward_with(&[Some(&q), Some(&k), Some(&v), None, Some(&am)])
            .unwrap();
        assert_near("attn_mask", &vals(&y), &[14.0, 25.0], 1e-5);
        // Both: only key 1 is left.
        let y = mha
            .forward_with(&[Some(&q), Some(&k), Some(&v), Some(&pad), Some(&am)])
            .unwrap();
        assert_near("both masks", &vals(&y), &[13.0, 24.0], 1e-5);
        // A float attn_mask is added to the scores: ln 3 on key 2, -inf on key 0.
        let fm = f32s(&[f32::NEG_INFINITY, 0.0, 3f32.ln()], &[1, 3]);
        let y = mha
            .forward_with(&[Some(&q), Some(&k), Some(&v), None, Some(&fm)])
            .unwrap();
        // weights 0, 1/4, 3/4: (3 + 15) / 4 = 4.5, (4 + 18) / 4 = 5.5
        assert_near("float attn_mask", &vals(&y), &[14.5, 25.5], 1e-5);
        // value None: the key is the value too. Keys (=values) 0, 0, 0: the mean is 0.
        let y = mha.forward_with(&[Some(&q), Some(&k), None]).unwrap();
        assert_near("value defaults to key", &vals(&y), &[10.0, 20.0], 1e-6);
        // Two heads of width 1 each: equal keys still give the mean.
        let two = identity_mha(2, 0.0, [0.0, 0.0]);
        let y = two.forward_with(&[Some(&q), Some(&k), Some(&v)]).unwrap();
        assert_near("two heads", &vals(&y), &[3.0, 4.0], 1e-5);

        // Self-attention: one input is the query passed three times, and trailing Nones
        // change nothing.
        let m = MultiheadAttention::new(4, 2).build().unwrap();
        let x = Tensor::randn(&[5, 2, 4], DType::Float32, Device::CPU).unwrap();
        let one = m.forward(&x).unwrap();
        let three = m.forward_many(&[&x, &x, &x]).unwrap();
        assert_eq!(vals(&one), vals(&three));
        let with = m.forward_with(&[Some(&x), None, None, None, None]).unwrap();
        assert_eq!(vals(&one), vals(&with));
        assert_eq!(vals(&one), vals(&m.forward_with(&[Some(&x)]).unwrap()));

        // A key_padding_mask hides a key: changing that key's position changes nothing.
        let data: Vec<f32> = (0..12).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut moved = data.clone();
        moved[8..12].copy_from_slice(&[5.0, -5.0, 2.0, 9.0]); // position 2 of 3
        let (a, b) = (f32s(&data, &[3, 1, 4]), f32s(&moved, &[3, 1, 4]));
        let pad = bools(&[false, false, true], &[1, 3]);
        let ya = m.forward_with(&[Some(&a), None, None, Some(&pad)]).unwrap();
        let yb = m.forward_with(&[Some(&b), None, None, Some(&pad)]).unwrap();
        // Positions 0 and 1 attend to keys 0 and 1 only: the same output.
        assert_near(
            "padded key hidden",
            &vals(&yb)[..8],
            &vals(&ya)[..8].iter().map(|x| *x as f64).collect::<Vec<_>>(),
            1e-6,
        );

        // Dropout acts in training mode only: in eval mode a dropout MHA is the plain one.
        let mut d = identity_mha(1, 0.5, [10.0, 20.0]);
        d.eval().unwrap();
        let y = d.forward_with(&[Some(&q), Some(&k), Some(&v)]).unwrap();
        assert_near("dropout in eval", &vals(&y), &[13.0, 24.0], 1e-5);
    });
}

#[test]
fn mha_errors() {
    leak_checked(|| {
        // embed_dim not divisible by num_heads.
        let e = MultiheadAttention::new(6, 4).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("num_heads"), "{}", e.message);
        for bad in [MultiheadAttention::new(0, 1), MultiheadAttention::new(4, 0)] {
            assert_eq!(bad.build().unwrap_err().code, ErrorCode::InvalidArgument);
        }
        let e = MultiheadAttention::new(4, 1)
            .dropout(1.5)
            .build()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = MultiheadAttention::new(4, 1)
            .dtype(DType::Int64)
            .build()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch);

        let m = MultiheadAttention::new(4, 2).build().unwrap();
        // A query of the wrong width: ShapeMismatch naming the module and the shapes.
        let q = Tensor::randn(&[3, 1, 5], DType::Float32, Device::CPU).unwrap();
        let e = m.forward(&q).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("MultiheadAttention"), "{}", e.message);
        assert!(e.message.contains("[3, 1, 5]"), "{}", e.message);
        // A key_padding_mask of the wrong shape.
        let x = Tensor::randn(&[3, 1, 4], DType::Float32, Device::CPU).unwrap();
        let pad = bools(&[false; 4], &[1, 4]);
        let e = m
            .forward_with(&[Some(&x), None, None, Some(&pad)])
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{}", e.message);
        // A float mask of another dtype.
        let fm = Tensor::zeros(&[3, 3], DType::Float64, Device::CPU).unwrap();
        let e = m
            .forward_with(&[Some(&x), None, None, None, Some(&fm)])
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{}", e.message);
        // No query, too many inputs, none at all.
        let e = m.forward_with(&[None, Some(&x)]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = m.forward_with(&[Some(&x); 6]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("1 to 5"), "{}", e.message);
        assert_eq!(
            m.forward_with(&[]).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        // A module without optional inputs refuses a None.
        let lin = Module::linear(4, 4, true, DType::Float32, Device::CPU).unwrap();
        let e = lin.forward_with(&[Some(&x), None]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let mse = Module::mse_loss(Default::default()).unwrap();
        let e = mse.forward_with(&[Some(&x), None]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    });
}

/// softmax of `xs`, computed here by hand (`-inf` gives 0).
fn softmax(xs: &[f64]) -> Vec<f64> {
    let top = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = xs.iter().map(|x| (x - top).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|x| x / sum).collect()
}

/// `bias + sum_j w[j] * rows[j]`: the output of one head of width 2 (identity projections).
fn mix(w: &[f64], rows: &[[f64; 2]], bias: [f64; 2]) -> Vec<f64> {
    let mut out = bias.to_vec();
    for (wj, r) in w.iter().zip(rows) {
        out[0] += wj * r[0];
        out[1] += wj * r[1];
    }
    out
}

/// Asserts `t`'s shape and its values within `tol`.
fn assert_tensor(what: &str, t: &Tensor, shape: &[i64], want: &[f64], tol: f64) {
    assert_eq!(t.shape(), shape, "{what}: shape");
    assert_near(what, &vals(t), want, tol);
}

/// Module::multihead_attention_forward against weights computed by hand: with identity
/// projections the weights are softmax(q.k_j / sqrt(head_dim) + mask) of the raw query
/// and keys, and the output their mix of the values plus out_proj.bias.
#[test]
fn mha_forward_with_weights_by_hand() {
    leak_checked(|| {
        let mha = identity_mha(1, 0.0, [10.0, 20.0]);
        let q = f32s(&[1.0, 2.0], &[1, 1, 2]); // [L=1, N=1, E=2]
        let k = f32s(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0], &[3, 1, 2]); // [S=3, N=1, E=2]
        let v = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 1, 2]);
        let vrows = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        let krows = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
        let bias = [10.0, 20.0];
        let r2 = 2f64.sqrt();
        let w = softmax(&[0.0, 1.0 / r2, 2.0 / r2]); // q.k_j = 0, 1, 2 over sqrt(2)

        let (out, weights) = mha
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, None, true)
            .unwrap();
        assert_tensor("output", &out, &[1, 1, 2], &mix(&w, &vrows, bias), 1e-5);
        assert_tensor("averaged weights [N, L, S]", &weights, &[1, 1, 3], &w, 1e-6);
        // The output is exactly forward_with's.
        let plain = mha.forward_with(&[Some(&q), Some(&k), Some(&v)]).unwrap();
        assert_eq!(vals(&out), vals(&plain));
        // One head: the per-head weights are the same, [N, H, L, S].
        let (out, weights) = mha
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, None, false)
            .unwrap();
        assert_tensor(
            "output, per head",
            &out,
            &[1, 1, 2],
            &mix(&w, &vrows, bias),
            1e-5,
        );
        assert_tensor("per-head weights", &weights, &[1, 1, 1, 3], &w, 1e-6);

        // Masks (bool: true where attention is NOT allowed): a masked key weighs 0.
        let pad = bools(&[false, false, true], &[1, 3]); // [N, S]: key 2 is padding
        let mut wp = softmax(&[0.0, 1.0 / r2]);
        wp.push(0.0);
        let (out, weights) = mha
            .multihead_attention_forward(&q, Some(&k), Some(&v), Some(&pad), None, true)
            .unwrap();
        assert_tensor(
            "key_padding_mask: output",
            &out,
            &[1, 1, 2],
            &mix(&wp, &vrows, bias),
            1e-5,
        );
        assert_tensor("key_padding_mask: weights", &weights, &[1, 1, 3], &wp, 1e-6);
        let am = bools(&[true, false, false], &[1, 3]); // [L, S]: key 0 hidden
        let mut wa = vec![0.0];
        wa.extend(softmax(&[1.0 / r2, 2.0 / r2]));
        let (_, weights) = mha
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, Some(&am), true)
            .unwrap();
        assert_tensor("bool attn_mask: weights", &weights, &[1, 1, 3], &wa, 1e-6);
        // A float attn_mask is added to the scores: ln 3 on key 0.
        let fm = f32s(&[3f32.ln(), 0.0, 0.0], &[1, 3]);
        let wf = softmax(&[3f64.ln(), 1.0 / r2, 2.0 / r2]);
        let (out, weights) = mha
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, Some(&fm), true)
            .unwrap();
        assert_tensor(
            "float attn_mask: output",
            &out,
            &[1, 1, 2],
            &mix(&wf, &vrows, bias),
            1e-5,
        );
        assert_tensor("float attn_mask: weights", &weights, &[1, 1, 3], &wf, 1e-6);

        // value None: the key; key and value None: the query (one key, weight 1).
        let (out, weights) = mha
            .multihead_attention_forward(&q, Some(&k), None, None, None, true)
            .unwrap();
        assert_tensor(
            "value None: output",
            &out,
            &[1, 1, 2],
            &mix(&w, &krows, bias),
            1e-5,
        );
        assert_tensor("value None: weights", &weights, &[1, 1, 3], &w, 1e-6);
        let (out, weights) = mha
            .multihead_attention_forward(&q, None, None, None, None, true)
            .unwrap();
        assert_tensor(
            "self-attention: output",
            &out,
            &[1, 1, 2],
            &[11.0, 22.0],
            1e-5,
        );
        assert_tensor(
            "self-attention: weights",
            &weights,
            &[1, 1, 1],
            &[1.0],
            1e-6,
        );

        // The weights are [N, L, S], batch first, although the query is [L, N, E]: query
        // (l=0, n=1) is (1, 2), the others zero (uniform weights u).
        let u = [1.0 / 3.0; 3];
        let q22 = f32s(&[0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0], &[2, 2, 2]);
        let k2 = f32s(
            &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0],
            &[3, 2, 2],
        );
        let (_, weights) = mha
            .multihead_attention_forward(&q22, Some(&k2), Some(&k2), None, None, true)
            .unwrap();
        let want: Vec<f64> = [&u[..], &u[..], &w[..], &u[..]].concat();
        assert_tensor("[N, L, S] layout", &weights, &[2, 2, 3], &want, 1e-6);
        // Unbatched: query [L, E], weights [L, S].
        let q2 = f32s(&[0.0, 0.0, 1.0, 2.0], &[2, 2]);
        let k1 = f32s(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0], &[3, 2]);
        let (out, weights) = mha
            .multihead_attention_forward(&q2, Some(&k1), Some(&k1), None, None, true)
            .unwrap();
        let want_out = [mix(&u, &krows, bias), mix(&w, &krows, bias)].concat();
        assert_tensor("unbatched: output", &out, &[2, 2], &want_out, 1e-5);
        assert_tensor(
            "unbatched: weights [L, S]",
            &weights,
            &[2, 3],
            &[&u[..], &w[..]].concat(),
            1e-6,
        );

        // Two heads of width 1 (scale 1): head 0 scores q0 * k_j0 = 0, 1, 0, head 1
        // q1 * k_j1 = 0, 0, 2; head h mixes value column h. Averaged: their mean.
        let two = identity_mha(2, 0.0, [0.0, 0.0]);
        let (w0, w1) = (softmax(&[0.0, 1.0, 0.0]), softmax(&[0.0, 0.0, 2.0]));
        let mean: Vec<f64> = w0.iter().zip(&w1).map(|(a, b)| (a + b) / 2.0).collect();
        let heads = [
            w0[0] + w0[1] * 3.0 + w0[2] * 5.0,
            w1[0] * 2.0 + w1[1] * 4.0 + w1[2] * 6.0,
        ];
        let (out, weights) = two
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, None, false)
            .unwrap();
        assert_tensor("two heads: output", &out, &[1, 1, 2], &heads, 1e-5);
        assert_tensor(
            "two heads: per head",
            &weights,
            &[1, 2, 1, 3],
            &[w0.clone(), w1.clone()].concat(),
            1e-6,
        );
        let (out, weights) = two
            .multihead_attention_forward(&q, Some(&k), Some(&v), None, None, true)
            .unwrap();
        assert_tensor(
            "two heads: output, averaged",
            &out,
            &[1, 1, 2],
            &heads,
            1e-5,
        );
        assert_tensor("two heads: averaged", &weights, &[1, 1, 3], &mean, 1e-6);
        let (_, weights) = two
            .multihead_attention_forward(
                &f32s(&[1.0, 2.0], &[1, 2]),
                Some(&k1),
                Some(&k1),
                None,
                None,
                false,
            )
            .unwrap();
        assert_tensor(
            "two heads, unbatched: [H, L, S]",
            &weights,
            &[2, 1, 3],
            &[w0, w1].concat(),
            1e-6,
        );

        // Dropout in training mode (a new module's): the weights come after dropout, each
        // 1/8 zeroed or doubled to 1/4, and the output mixes exactly those.
        let mut dr = identity_mha(1, 0.5, [10.0, 20.0]);
        let k8 = f32s(&[0.0; 16], &[8, 1, 2]); // equal keys: weights 1/8
        let vdata: Vec<f32> = (1..=16).map(|i| i as f32).collect();
        let v8 = f32s(&vdata, &[8, 1, 2]);
        let (out, weights) = dr
            .multihead_attention_forward(&q, Some(&k8), Some(&v8), None, None, true)
            .unwrap();
        let wd: Vec<f64> = vals(&weights).iter().map(|x| *x as f64).collect();
        assert!(
            wd.iter().all(|x| x.abs() < 1e-7 || (x - 0.25).abs() < 1e-6),
            "dropout weights {wd:?}: want each 0 or 1/4"
        );
        let vrows8: Vec<[f64; 2]> = vdata
            .chunks(2)
            .map(|c| [c[0] as f64, c[1] as f64])
            .collect();
        assert_tensor(
            "dropout: output",
            &out,
            &[1, 1, 2],
            &mix(&wd, &vrows8, bias),
            1e-4,
        );
        dr.eval().unwrap();
        let (_, weights) = dr
            .multihead_attention_forward(&q, Some(&k8), Some(&v8), None, None, true)
            .unwrap();
        assert_tensor("dropout in eval", &weights, &[1, 1, 8], &[0.125; 8], 1e-6);

        // The weights are part of the autograd graph: sum(weights^2) reaches the query.
        let qg = f32s(&[1.0, 2.0], &[1, 1, 2]);
        qg.set_requires_grad(true).unwrap();
        let (_, weights) = mha
            .multihead_attention_forward(&qg, Some(&k), Some(&v), None, None, true)
            .unwrap();
        weights
            .mul(&weights)
            .unwrap()
            .sum(&[], false)
            .unwrap()
            .backward()
            .unwrap();
        let g = qg.grad().unwrap().expect("a query gradient");
        assert_eq!(g.shape(), vec![1, 1, 2]);
        assert!(vals(&g).iter().any(|x| *x != 0.0), "{:?}", vals(&g));
    });
}

/// Random modules: the shapes for every layout, rows that sum to 1, the averaged weights
/// the mean of the per-head ones, the output forward's.
#[test]
fn mha_forward_with_weights_shapes() {
    leak_checked(|| {
        let m = MultiheadAttention::new(8, 2).build().unwrap();
        let q = Tensor::randn(&[3, 4, 8], DType::Float32, Device::CPU).unwrap(); // [L, N, E]
        let kv = Tensor::randn(&[5, 4, 8], DType::Float32, Device::CPU).unwrap(); // [S, N, E]
        let (out, avg) = m
            .multihead_attention_forward(&q, Some(&kv), Some(&kv), None, None, true)
            .unwrap();
        let (_, per) = m
            .multihead_attention_forward(&q, Some(&kv), Some(&kv), None, None, false)
            .unwrap();
        assert_eq!(out.shape(), vec![3, 4, 8]);
        assert_eq!(avg.shape(), vec![4, 3, 5]);
        assert_eq!(per.shape(), vec![4, 2, 3, 5]);
        let (a, p) = (vals(&avg), vals(&per));
        for n in 0..4 {
            for l in 0..3 {
                let mut row = 0.0;
                for s in 0..5 {
                    let (h0, h1) = (
                        p[((n * 2) * 3 + l) * 5 + s],
                        p[((n * 2 + 1) * 3 + l) * 5 + s],
                    );
                    let got = a[(n * 3 + l) * 5 + s];
                    assert!(
                        (got - (h0 + h1) / 2.0).abs() < 1e-6,
                        "{got} against {h0}, {h1}"
                    );
                    row += got as f64;
                }
                assert!((row - 1.0).abs() < 1e-5, "a row sums to {row}");
            }
        }
        // Self-attention (key and value None): the output is forward's.
        let (out, w) = m
            .multihead_attention_forward(&q, None, None, None, None, true)
            .unwrap();
        assert_eq!(w.shape(), vec![4, 3, 3]);
        assert_eq!(vals(&out), vals(&m.forward(&q).unwrap()));
        // batch_first: query [N, L, E]; the weights are [N, (H,) L, S] as without it.
        let bf = MultiheadAttention::new(8, 4)
            .batch_first(true)
            .build()
            .unwrap();
        let x = Tensor::randn(&[4, 3, 8], DType::Float32, Device::CPU).unwrap();
        let kv = Tensor::randn(&[4, 6, 8], DType::Float32, Device::CPU).unwrap();
        let (out, w) = bf
            .multihead_attention_forward(&x, Some(&kv), None, None, None, false)
            .unwrap();
        assert_eq!(out.shape(), vec![4, 3, 8]);
        assert_eq!(w.shape(), vec![4, 4, 3, 6]);
        // A float64 module gives float64 weights; unbatched [L, S].
        let d = MultiheadAttention::new(4, 1)
            .dtype(DType::Float64)
            .device(Device::CPU)
            .build()
            .unwrap();
        let x = Tensor::randn(&[2, 4], DType::Float64, Device::CPU).unwrap();
        let (_, w) = d
            .multihead_attention_forward(&x, None, None, None, None, true)
            .unwrap();
        assert_eq!((w.dtype(), w.shape()), (DType::Float64, vec![2, 2]));
    });
}

#[test]
fn mha_forward_with_weights_errors() {
    leak_checked(|| {
        let x = Tensor::randn(&[3, 1, 4], DType::Float32, Device::CPU).unwrap();
        // A module that is not a MultiheadAttention: InvalidArgument naming its kind.
        let lin = Module::linear(4, 4, true, DType::Float32, Device::CPU).unwrap();
        let e = lin
            .multihead_attention_forward(&x, None, None, None, None, true)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("Linear"), "{}", e.message);
        assert!(
            e.message.contains("not a MultiheadAttention"),
            "{}",
            e.message
        );
        let layer = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(8)
            .build()
            .unwrap();
        let e = layer
            .multihead_attention_forward(&x, None, None, None, None, true)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("TransformerEncoderLayer"),
            "{}",
            e.message
        );
        // Its self_attn child is one.
        let (_, w) = layer
            .child("self_attn")
            .unwrap()
            .multihead_attention_forward(&x, None, None, None, None, true)
            .unwrap();
        assert_eq!(w.shape(), vec![1, 3, 3]);

        let m = MultiheadAttention::new(4, 2).build().unwrap();
        // The forward errors: a query of the wrong width names the module and the shape.
        let q5 = Tensor::randn(&[3, 1, 5], DType::Float32, Device::CPU).unwrap();
        let e = m
            .multihead_attention_forward(&q5, None, None, None, None, true)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("MultiheadAttention"), "{}", e.message);
        assert!(e.message.contains("[3, 1, 5]"), "{}", e.message);
        let pad = bools(&[false; 4], &[1, 4]);
        let e = m
            .multihead_attention_forward(&x, None, None, Some(&pad), None, true)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{}", e.message);
        let fm = Tensor::zeros(&[3, 3], DType::Float64, Device::CPU).unwrap();
        let e = m
            .multihead_attention_forward(&x, None, None, None, Some(&fm), false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::DtypeMismatch, "{}", e.message);
    });
}

#[test]
fn encoder_layer_keys_values_and_masks() {
    leak_checked(|| {
        let layer = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(6)
            .build()
            .unwrap();
        assert_eq!(layer.kind().unwrap(), "TransformerEncoderLayer");
        assert_eq!(
            names(&layer.state_dict().unwrap()),
            [
                "self_attn.in_proj_weight",
                "self_attn.in_proj_bias",
                "self_attn.out_proj.weight",
                "self_attn.out_proj.bias",
                "linear1.weight",
                "linear1.bias",
                "linear2.weight",
                "linear2.bias",
                "norm1.weight",
                "norm1.bias",
                "norm2.weight",
                "norm2.bias",
            ]
        );
        let kids: Vec<String> = layer
            .children()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            kids,
            [
                "self_attn",
                "linear1",
                "dropout",
                "linear2",
                "norm1",
                "norm2",
                "dropout1",
                "dropout2"
            ]
        );
        assert_eq!(
            layer.child("linear1").unwrap().parameters().unwrap()[0].shape(),
            vec![6, 4]
        );
        // PyTorch's default dim_feedforward is 2048.
        let dflt = TransformerEncoderLayer::new(4, 1).build().unwrap();
        assert_eq!(
            dflt.child("linear2").unwrap().parameters().unwrap()[0].shape(),
            vec![4, 2048]
        );

        // Zeroed Linears: attention and feed-forward add nothing. Post-norm: the layer is
        // norm2(norm1(x)); [1, 2, 3, 6] has mean 3 and biased variance 3.5.
        let want: Vec<f64> = [1.0, 2.0, 3.0, 6.0]
            .iter()
            .map(|x: &f64| (x - 3.0) / (3.5f64 + 1e-5).sqrt())
            .collect();
        let x = f32s(&[1.0, 2.0, 3.0, 6.0], &[1, 1, 4]);
        for act in [Activation::Relu, Activation::Gelu] {
            let mut post = TransformerEncoderLayer::new(4, 2)
                .dim_feedforward(6)
                .activation(act)
                .dropout(0.0)
                .build()
                .unwrap();
            zero_linears(&mut post);
            assert_near("post-norm", &vals(&post.forward(&x).unwrap()), &want, 1e-4);
        }
        // Pre-norm: x + sa(norm1(x)) + ff(norm2(...)) = x exactly.
        let mut pre = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(6)
            .norm_first(true)
            .build()
            .unwrap();
        pre.eval().unwrap();
        zero_linears(&mut pre);
        assert_near(
            "pre-norm",
            &vals(&pre.forward(&x).unwrap()),
            &[1.0, 2.0, 3.0, 6.0],
            1e-6,
        );
        // layer_norm_eps reaches the norms: eps 3.5 halves the variance's root.
        let mut eps = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(6)
            .dropout(0.0)
            .layer_norm_eps(3.5)
            .build()
            .unwrap();
        zero_linears(&mut eps);
        let once: Vec<f64> = [1.0, 2.0, 3.0, 6.0]
            .iter()
            .map(|x: &f64| (x - 3.0) / 7f64.sqrt())
            .collect();
        let var1 = once.iter().map(|x| x * x).sum::<f64>() / 4.0;
        let twice: Vec<f64> = once.iter().map(|x| x / (var1 + 3.5).sqrt()).collect();
        assert_near(
            "layer_norm_eps",
            &vals(&eps.forward(&x).unwrap()),
            &twice,
            1e-5,
        );

        // Masks are the module's (true = NOT attended). A causal src_mask: a later
        // position does not change the earlier outputs; a padding mask: a padded position
        // does not change the others.
        let mut l = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(8)
            .batch_first(true)
            .build()
            .unwrap();
        l.eval().unwrap();
        let data: Vec<f32> = (0..12).map(|i| (i as f32 * 0.71).cos()).collect();
        let mut moved = data.clone();
        moved[8..12].copy_from_slice(&[3.0, -1.0, 0.5, 4.0]); // position 2 of 3
        let (a, b) = (f32s(&data, &[1, 3, 4]), f32s(&moved, &[1, 3, 4])); // [N, S, E]
        let causal = bools(
            &[false, true, true, false, false, true, false, false, false],
            &[3, 3],
        );
        let pad = bools(&[false, false, true], &[1, 3]);
        for (what, inputs) in [
            ("src_mask", [Some(&causal), None]),
            ("src_key_padding_mask", [None, Some(&pad)]),
        ] {
            let ya = vals(&l.forward_with(&[Some(&a), inputs[0], inputs[1]]).unwrap());
            let yb = vals(&l.forward_with(&[Some(&b), inputs[0], inputs[1]]).unwrap());
            assert_near(
                what,
                &yb[..8],
                &ya[..8].iter().map(|x| *x as f64).collect::<Vec<_>>(),
                1e-5,
            );
            assert!(
                (ya[8] - yb[8]).abs() > 1e-3,
                "{what}: position 2 itself changed"
            );
        }
        // Without a mask, position 2 reaches the others.
        let ya = vals(&l.forward(&a).unwrap());
        let yb = vals(&l.forward(&b).unwrap());
        assert!(ya[..8]
            .iter()
            .zip(&yb[..8])
            .any(|(p, q)| (p - q).abs() > 1e-4));

        // Errors.
        let e = TransformerEncoderLayer::new(6, 4).build().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        for bad in [
            TransformerEncoderLayer::new(4, 2).dim_feedforward(0),
            TransformerEncoderLayer::new(4, 2).dropout(-0.1),
            TransformerEncoderLayer::new(4, 2).layer_norm_eps(0.0),
        ] {
            assert_eq!(bad.build().unwrap_err().code, ErrorCode::InvalidArgument);
        }
        let wide = Tensor::randn(&[1, 3, 5], DType::Float32, Device::CPU).unwrap();
        let e = l.forward(&wide).unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch);
        assert!(e.message.contains("MultiheadAttention"), "{}", e.message);
        let e = l
            .forward_with(&[Some(&a), None, None, Some(&a)])
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("1 to 3"), "{}", e.message);
    });
}

#[test]
fn encoder_keys_norm_and_errors() {
    leak_checked(|| {
        let layer = TransformerEncoderLayer::new(4, 2)
            .dim_feedforward(6)
            .dropout(0.0);
        let layers: Vec<Module> = (0..2).map(|_| layer.build().unwrap()).collect();
        let first = layers[0].share();
        let norm = LayerNorm::new(&[4]).build().unwrap();
        let mut enc = TransformerEncoder::new(layers, Some(norm)).build().unwrap();
        assert_eq!(enc.kind().unwrap(), "TransformerEncoder");
        let n = names(&enc.state_dict().unwrap());
        assert_eq!(n.len(), 2 * 12 + 2);
        assert_eq!(n[0], "layers.0.self_attn.in_proj_weight");
        assert_eq!(n[12], "layers.1.self_attn.in_proj_weight");
        assert_eq!(n[23], "layers.1.norm2.bias");
        assert_eq!(&n[24..], ["norm.weight", "norm.bias"]);
        // The layers are the modules passed in, not copies; each has its own parameters.
        let sd = enc.state_dict().unwrap();
        let w0 = sd
            .get("layers.0.self_attn.in_proj_weight")
            .unwrap()
            .unwrap();
        let w1 = sd
            .get("layers.1.self_attn.in_proj_weight")
            .unwrap()
            .unwrap();
        assert!(w0.shares_storage(&first.parameters().unwrap()[0]));
        assert!(!w0.shares_storage(&w1));
        assert_ne!(vals(&w0), vals(&w1));

        // Zeroed Linears: each layer is two LayerNorms, then the final norm. [1, 2, 3, 6]
        // normalised once is (x - 3) / sqrt(3.5 + eps); again it barely changes.
        zero_linears(&mut enc);
        let x = f32s(&[1.0, 2.0, 3.0, 6.0, 1.0, 2.0, 3.0, 6.0], &[2, 1, 4]);
        let want: Vec<f64> = [1.0, 2.0, 3.0, 6.0, 1.0, 2.0, 3.0, 6.0]
            .iter()
            .map(|x: &f64| (x - 3.0) / 3.5f64.sqrt())
            .collect();
        let y = enc.forward(&x).unwrap();
        assert_eq!(y.shape(), vec![2, 1, 4]);
        assert_near("encoder", &vals(&y), &want, 1e-3);
        // Masks pass through to every layer.
        let pad = bools(&[false, true], &[1, 2]);
        let causal = bools(&[false, true, false, false], &[2, 2]);
        let y = enc
            .forward_with(&[Some(&x), Some(&causal), Some(&pad)])
            .unwrap();
        assert_near("encoder with masks", &vals(&y), &want, 1e-3);
        let e = enc
            .forward_with(&[Some(&x), None, Some(&bools(&[false; 3], &[1, 3]))])
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ShapeMismatch, "{}", e.message);

        // No final norm.
        let plain = TransformerEncoder::new([layer.build().unwrap()], None)
            .build()
            .unwrap();
        let n = names(&plain.state_dict().unwrap());
        assert_eq!(n.len(), 12);
        assert!(n.iter().all(|k| k.starts_with("layers.0.")));

        // Errors: no layers, the same layer twice, a module that is not a layer.
        let e = TransformerEncoder::new(Vec::new(), None)
            .build()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = TransformerEncoder::new([first.share(), first.share()], None)
            .build()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("same module"), "{}", e.message);
        let e = TransformerEncoder::new([Module::relu().unwrap()], None)
            .build()
            .unwrap_err();
        assert!(e.message.contains("ReLU"), "{}", e.message);
    });
}

#[test]
fn attention_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MultiheadAttention>();
    assert_send_sync::<TransformerEncoderLayer>();
    assert_send_sync::<TransformerEncoder>();
    assert_send_sync::<Activation>();
    leak_checked(|| {
        let mut enc = TransformerEncoder::new(
            [TransformerEncoderLayer::new(4, 2)
                .dim_feedforward(8)
                .build()
                .unwrap()],
            None,
        )
        .build()
        .unwrap();
        enc.eval().unwrap();
        let enc = std::sync::Arc::new(enc);
        let x = Tensor::randn(&[3, 2, 4], DType::Float32, Device::CPU).unwrap();
        let pad = bools(&[false, false, true, false, false, false], &[2, 3]);
        let want = vals(&enc.forward_with(&[Some(&x), None, Some(&pad)]).unwrap());
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (enc, x, pad) = (enc.clone(), x.clone(), pad.clone());
                std::thread::spawn(move || {
                    vals(&enc.forward_with(&[Some(&x), None, Some(&pad)]).unwrap())
                })
            })
            .collect();
        for w in workers {
            assert_eq!(w.join().unwrap(), want);
        }
    });
}
