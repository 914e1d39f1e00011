#!/usr/bin/env python3
# The block scheme of src/cuda/attention.cu transcribed thread by thread in NumPy (no GPU
# needed): the transposed query and key tiles, the online softmax reduced over the 16
# threads of a row group, the probabilities stored with row_swizzle (asserted to be a
# bijection: no two threads write one slot, none is left unwritten) and the final
# normalisation, against attention in float64. Written to check the index math before a
# GPU ran the kernel; keep it in step with the kernel when the scheme changes.
# Run: /usr/bin/python3 bench/gpu/attention_scheme.py
import numpy as np
kRows=kKeys=kHead=64
def swz(c): return ((c >> 2) & 7) << 2
def block(q, k, v, L, S, n, tile, scale_log2, causal):
    row0 = tile*kRows
    q_t = np.zeros((kHead, kRows), np.float32)
    for f in range(kRows*kHead//4):
        r = f & 63; e4 = f // 64
        x = q[n, row0+r, e4*4:e4*4+4] if row0+r < L else np.zeros(4, np.float32)
        for t in range(4): q_t[e4*4+t, r] = np.float32(x[t]*scale_log2)
    o = np.zeros((16,16,4,4), np.float32); m = np.full((16,16,4), -np.inf, np.float32); l = np.zeros((16,16,4), np.float32)
    keys_end = min(S, row0+kRows) if causal else S
    key0 = 0
    while key0 < keys_end:
        kp = np.full(kHead*kKeys, np.nan, np.float32); vs = np.full((kKeys, kHead), np.nan, np.float32)
        for f in range(kKeys*kHead//4):
            c = f & 63; e4 = f // 64
            x = k[n, key0+c, e4*4:e4*4+4] if key0+c < S else np.zeros(4, np.float32)
            for t in range(4): kp[(e4*4+t)*kKeys + c] = x[t]
        for f in range(kKeys*kHead//4):
            c = f // 16; e4 = f % 16
            vs[c, e4*4:e4*4+4] = v[n, key0+c, e4*4:e4*4+4] if key0+c < S else 0
        s = np.zeros((16,16,4,4), np.float32)
        for ty in range(16):
            for tx in range(16):
                a = q_t[:, ty*4:ty*4+4]; b = kp.reshape(kHead, kKeys)[:, tx*4:tx*4+4]
                s[ty,tx] = a.T @ b
                for i in range(4):
                    for j in range(4):
                        key = key0+tx*4+j; row = row0+ty*4+i
                        if key >= S or (causal and key > row): s[ty,tx,i,j] = -np.inf
        # online softmax: reduce over tx (16 threads of a row group)
        for ty in range(16):
            for i in range(4):
                top = max(s[ty,tx,i,:].max() for tx in range(16))
                for tx in range(16):
                    m_new = max(m[ty,tx,i], top)
                    base = 0 if m_new == -np.inf else m_new
                    rescale = np.exp2(m[ty,tx,i]-base)
                    s[ty,tx,i,:] = np.exp2(s[ty,tx,i,:]-base)
                tot = sum(s[ty,tx,i,:].sum() for tx in range(16))
                for tx in range(16):
                    m_new = max(m[ty,tx,i], top); base = 0 if m_new == -np.inf else m_new
                    rescale = np.exp2(m[ty,tx,i]-base)
                    l[ty,tx,i] = l[ty,tx,i]*rescale + tot; m[ty,tx,i] = m_new; o[ty,tx,i,:] *= rescale
        kp[:] = np.nan
        for ty in range(16):
            for tx in range(16):
                for j in range(4):
                    c = tx*4+j; at = c*kRows + ((ty*4) ^ swz(c))
                    assert np.isnan(kp[at:at+4]).all(), "overlap"
                    kp[at:at+4] = s[ty,tx,:,j]
        assert not np.isnan(kp).any(), "hole"
        for ty in range(16):
            for tx in range(16):
                for c in range(kKeys):
                    at = c*kRows + ((ty*4) ^ swz(c))
                    o[ty,tx] += np.outer(kp[at:at+4], vs[c, tx*4:tx*4+4])
        key0 += kKeys
    out = np.full((kRows, kHead), np.nan, np.float32)
    for ty in range(16):
        for tx in range(16):
            for i in range(4):
                row = ty*4+i
                if row0+row < L: out[row, tx*4:tx*4+4] = o[ty,tx,i]/l[ty,tx,i]
    return out

def ref(q,k,v,scale,causal):
    s = np.einsum('nle,nse->nls', q.astype(np.float64), k.astype(np.float64))*scale
    if causal:
        L,S = s.shape[1:]
        s = np.where(np.arange(S)[None,:] > np.arange(L)[:,None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return p @ v.astype(np.float64)

rng = np.random.default_rng(0)
for (N,L,S,causal) in [(1,100,77,0),(1,100,77,1),(1,130,200,1),(1,1,5,0)]:
    q = rng.standard_normal((N,L,64)).astype(np.float32); k = rng.standard_normal((N,S,64)).astype(np.float32); v = rng.standard_normal((N,S,64)).astype(np.float32)
    scale = 1/8
    tiles = (L+63)//64
    got = np.concatenate([block(q,k,v,L,S,0,t,np.float32(scale*1.4426950408889634),causal) for t in range(tiles)])[:L]
    want = ref(q,k,v,scale,causal)[0]
    err = np.abs(got-want).max()
    print(f'N {N} L {L} S {S} causal {causal}: max abs error {err:.2e}')
    assert err < 1e-5
