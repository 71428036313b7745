"""The project's own JAX implementations of ckbench's workloads (issue 34).

Each is written from the workload's definition (workloads/<id>/README.md: the
formula, the shapes, dtypes and layouts, where bf16 rounding happens), not
from the C reference and not from JAXBench's code. An implementation takes
the input arrays by tensor name (bf16 inputs arrive as their exact f32
values), the dims and the consts, and returns the outputs by name as f32
arrays; the driver (oracle.py) rounds a bf16 output to bf16 once, so an
implementation rounds only at the intermediate points the README names.

Matmuls run at "highest" precision (oracle.py sets it): f32 products and
accumulation, the definition's "bf16 in, f32 accumulate".
"""
import jax
import jax.numpy as jnp
import numpy as np

F32 = jnp.float32
NEG_FLT_MAX = float(np.finfo(np.float32).max)


def bf(x):
    """Rounds to bf16 (nearest even) and back to f32: a bf16 rounding point."""
    return jnp.asarray(x, F32).astype(jnp.bfloat16).astype(F32)


def f(x):
    return jnp.asarray(x, F32)


def ein(spec, *ops):
    return jnp.einsum(spec, *[f(o) for o in ops], precision=jax.lax.Precision.HIGHEST,
                      preferred_element_type=F32)


def softmax(s, axis=-1):
    return jax.nn.softmax(s, axis=axis)


# ---- production workloads -------------------------------------------------

def w1p(x, d, c):
    # causal MHA, [B, H, S, D]: f32 scores * D^-0.5, -1e9 above the diagonal,
    # P = bf16(softmax), out = bf16(P @ v)
    q, k, v = x["q"], x["k"], x["v"]
    S, D = d["S"], d["D"]
    s = ein("bhqd,bhkd->bhqk", q, k) * (D ** -0.5)
    causal = jnp.tril(jnp.ones((S, S), bool))
    s = jnp.where(causal, s, -1e9)
    p = bf(softmax(s))
    return {"out": ein("bhqk,bhkd->bhqd", p, v)}


def w2p(x, d, c):
    # GQA, [B, S, H, D]; query head h reads kv head h // G
    q, k, v = x["query"], x["key"], x["value"]
    S, D, HQ, HKV = d["S"], d["D"], d["HQ"], d["HKV"]
    G = HQ // HKV
    k = jnp.repeat(f(k), G, axis=2)
    v = jnp.repeat(f(v), G, axis=2)
    s = ein("bqhd,bkhd->bhqk", q, k) * (D ** -0.5)
    s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -1e9)
    p = bf(softmax(s))
    return {"out": ein("bhqk,bkhd->bqhd", p, v)}


def rope_split_halves(x, pos, R, theta=10000.0):
    """RoPE on split halves (3p's README): freq_i = theta^(-2i/R), angle = s*freq_i
    in f32, cos and sin rounded to bf16, [x1 cos - x2 sin, x2 cos + x1 sin], one
    bf16 rounding. x [..., S, ..., R] with pos broadcastable to x[..., :R/2]."""
    i = jnp.arange(R // 2, dtype=F32)
    freq = jnp.power(F32(theta), -2.0 * i / R).astype(F32)
    ang = pos[..., None].astype(F32) * freq
    cos, sin = bf(jnp.cos(ang)), bf(jnp.sin(ang))
    x1, x2 = f(x)[..., : R // 2], f(x)[..., R // 2:]
    return bf(jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1))


def w3p(x, d, c):
    # MLA: latent q and kv projections, per-head k_nope and v from the latent,
    # a rope key shared by every head, causal attention, output projection
    B, S, E, H, QL, KVL, NOPE, ROPE, VD = (d[k] for k in ("B", "S", "E", "H", "QL", "KVL",
                                                          "NOPE", "ROPE", "VD"))
    QKD = NOPE + ROPE
    xs = x["x"]                                                      # [B, S, E]
    cq = bf(ein("bse,eq->bsq", xs, x["q_down"]))
    q = bf(ein("bsq,qhd->bshd", cq, x["q_up"]))                       # [B, S, H, QKD]
    kv = bf(ein("bse,er->bsr", xs, x["kv_down"]))                     # [B, S, KVL + ROPE]
    lat, k_rope = kv[..., :KVL], kv[..., KVL:]
    k_nope = bf(ein("bsl,lhn->bshn", lat, x["k_up"]))
    v = bf(ein("bsl,lhv->bshv", lat, x["v_up"]))
    pos = jnp.arange(S)
    q_rope = rope_split_halves(q[..., NOPE:], pos[None, :, None], ROPE)
    k_rope = rope_split_halves(k_rope, pos[None, :], ROPE)            # [B, S, ROPE]
    q_full = jnp.concatenate([q[..., :NOPE], q_rope], axis=-1)
    k_full = jnp.concatenate([k_nope, jnp.broadcast_to(k_rope[:, :, None, :],
                                                       (B, S, H, ROPE))], axis=-1)
    sc = ein("bqhd,bkhd->bhqk", q_full, k_full) * (QKD ** -0.5)
    causal = jnp.tril(jnp.ones((S, S), bool))
    sc = jnp.where(causal, sc, -1e9)
    p = bf(softmax(sc))
    o = bf(ein("bhqk,bkhv->bqhv", p, v))                              # [B, S, H, VD]
    return {"out": ein("bqhv,hve->bqe", o, x["o_proj"])}


def w4p(x, d, c):
    # causal GQA over a batch, q pre-scaled, [B, H, S, D]; -1e30 mask, bf16 P
    q, k, v = x["q"], x["k"], x["v"]
    S, HQ, HKV = d["S"], d["HQ"], d["HKV"]
    G = HQ // HKV
    k = jnp.repeat(f(k), G, axis=1)
    v = jnp.repeat(f(v), G, axis=1)
    sc = ein("bhqd,bhkd->bhqk", q, k)
    causal = jnp.tril(jnp.ones((S, S), bool))
    sc = jnp.where(causal, sc, -1e30)
    p = bf(softmax(sc))
    return {"out": ein("bhqk,bhkd->bhqd", p, v)}


def w5p(x, d, c):
    # causal MHA with a per-head relative position bias added to the f32 scores
    q, k, v, bias = x["q"], x["k"], x["v"], x["rel_pos_bias"]
    S, D = d["S"], d["D"]
    s = ein("bhqd,bhkd->bhqk", q, k) * (D ** -0.5) + f(bias)[None]
    s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, -1e30)
    p = bf(softmax(s))
    return {"out": ein("bhqk,bhkd->bhqd", p, v)}


def w6p(x, d, c):
    # paged decode attention: one query row per sequence at cu_q_lens[i]
    # (dynamic_slice: start clamped), pages gathered through the (clamped)
    # page table, length mask -1e30, GQA head h -> kv head h // G
    NS, HQ, HKV, D, PS, PPS, NT, NP = (d[k] for k in ("NS", "HQ", "HKV", "D", "PS", "PPS", "NT", "NP"))
    G, L = HQ // HKV, PPS * PS
    queries, kp, vp = f(x["queries"]), f(x["k_pages"]), f(x["v_pages"])
    kv_lens, pidx, cu = (jnp.asarray(x[n]) for n in ("kv_lens", "page_indices", "cu_q_lens"))

    def one(i):
        start = jnp.clip(cu[i], 0, NT - 1)
        qi = jax.lax.dynamic_slice(queries, (start, 0, 0), (1, HQ, D))[0]  # [HQ, D]
        pages = jnp.clip(pidx[i], 0, NP - 1)
        K = jnp.repeat(kp[pages].reshape(L, HKV, D), G, axis=1)           # [L, HQ, D]
        V = jnp.repeat(vp[pages].reshape(L, HKV, D), G, axis=1)
        s = ein("hd,khd->hk", qi, K) * (D ** -0.5)
        s = jnp.where(jnp.arange(L)[None, :] < kv_lens[i], s, -1e30)
        p = bf(softmax(s))
        return ein("hk,khd->hd", p, V)

    return {"out": jnp.stack([one(i) for i in range(NS)])}


def w7p(x, d, c):
    # ragged paged attention, one serving step: sequence i < num_seqs owns the
    # q_len = cu_q_lens[i+1] - cu_q_lens[i] packed query rows from cu_q_lens[i]
    # (row index clamped to NT - 1), K / V interleaved on the head axis (kv head
    # g: K at 2g, V at 2g+1), its row t attends key j iff j <= kv_len - q_len + t
    # and j < kv_len (else -0.7*FLT_MAX), the answer to the same packed rows;
    # every other row is zero
    NS, NT, HQ, HKV, D, PS, PPS, NP = (d[k] for k in ("NS", "NT", "HQ", "HKV", "D", "PS", "PPS", "NP"))
    G, L = HQ // HKV, PPS * PS
    queries, kvp = f(x["queries"]), f(x["kv_pages"])
    kv_lens, pidx, cu = (np.asarray(x[n]).astype(np.int64) for n in ("kv_lens", "page_indices", "cu_q_lens"))
    num_seqs = min(max(int(np.asarray(x["num_seqs"]).reshape(-1)[0]), 0), NS)
    out = jnp.zeros((NT, HQ, D), F32)
    for i in range(num_seqs):
        q_len = min(max(int(cu[i + 1] - cu[i]), 0), NT)
        if q_len == 0:
            continue
        rows = np.minimum(np.maximum(cu[i] + np.arange(q_len), 0), NT - 1)
        q = queries[rows]                                                 # [q_len, HQ, D]
        kv = kvp[np.clip(pidx[i], 0, NP - 1)].reshape(L, 2 * HKV, D)
        K = jnp.repeat(kv[:, 0::2], G, axis=1)
        V = jnp.repeat(kv[:, 1::2], G, axis=1)
        s = ein("thd,khd->htk", q, K) * (D ** -0.5)
        t = np.arange(q_len)[:, None]
        j = np.arange(L)[None, :]
        masked = (j > kv_lens[i] - q_len + t) | (j >= kv_lens[i])
        s = jnp.where(masked[None], -0.7 * NEG_FLT_MAX, s)
        p = bf(softmax(s))
        out = out.at[rows].set(ein("htk,khd->thd", p, V))
    return {"out": out}


def w8p(x, d, c):
    return {"C": ein("mk,kn->mn", x["A"], x["B"])}


def w9p(x, d, c):
    # SwiGLU: g = bf16(x@gate), u = bf16(x@up), h = bf16(silu(g)*u), out = bf16(h@down)
    g = bf(ein("bse,ef->bsf", x["x"], x["gate"]))
    u = bf(ein("bse,ef->bsf", x["x"], x["up"]))
    h = bf(jax.nn.silu(g) * u)
    return {"out": ein("bsf,fe->bse", h, x["down"])}


def w10p(x, d, c):
    # top-2 of 8 SwiGLU experts; every expert on every token, dense f32 weights
    K = d["K"]
    xx = x["x"]
    logits = bf(ein("bse,en->bsn", xx, x["router"]))
    vals, idx = jax.lax.top_k(logits, K)             # ties: lower index first
    p = bf(softmax(vals))
    w = jnp.sum(jax.nn.one_hot(idx, d["N"], dtype=F32) * p[..., None], axis=-2)  # [B, S, N]
    g = bf(jax.nn.silu(ein("bse,nem->bsnm", xx, x["gate"])))
    u = bf(ein("bse,nem->bsnm", xx, x["up"]))
    h = bf(g * u)
    y = bf(ein("bsnm,nme->bsne", h, x["down"]))
    return {"out": jnp.sum(w[..., None] * y, axis=-2)}


def _grouped(lhs, rhs, sizes, M, CAP):
    # rows sorted by group: group g owns sizes[g] rows after the groups before it;
    # rows past the last group are 0 (sizes clamped to [0, CAP], ends to M)
    sizes = jnp.clip(jnp.asarray(sizes), 0, CAP)
    ends = jnp.minimum(jnp.cumsum(sizes), M)
    r = jnp.arange(M)
    gid = jnp.sum(r[:, None] >= ends[None, :], axis=1)            # group of each row
    valid = gid < rhs.shape[0]
    gidc = jnp.minimum(gid, rhs.shape[0] - 1)
    all_out = ein("mk,gkn->gmn", lhs, rhs)                        # every row by every group
    out = jnp.take_along_axis(all_out, gidc[None, :, None], axis=0)[0]
    return jnp.where(valid[:, None], out, 0.0)


def w11p(x, d, c):
    return {"out": _grouped(x["lhs"], x["rhs"], x["group_sizes"], d["M"], d["CAP"])}


def w12p(x, d, c):
    xx = f(x["x"])
    ms = jnp.mean(xx * xx, axis=-1, keepdims=True)
    normed = bf(xx * jax.lax.rsqrt(ms + c["EPS"]))
    return {"out": normed * f(x["scale"])}


def w13p(x, d, c):
    logits = ein("bh,hv->bv", x["hidden"], x["weight"])
    labels = jnp.asarray(x["labels"])
    V = d["V"]
    lse = jax.scipy.special.logsumexp(logits, axis=-1)
    inr = (labels >= 0) & (labels < V)
    picked = jnp.take_along_axis(logits, jnp.clip(labels, 0, V - 1)[:, None], axis=1)[:, 0]
    losses = jnp.where(inr, lse - picked, 0.0)
    return {"loss": jnp.mean(losses), "losses": losses}


def w14p(x, d, c):
    return {"out": _grouped(x["x"], x["w"], x["group_sizes"], d["M"], d["CAP"])}


def w15p(x, d, c):
    H, S = d["H"], d["S"]
    gamma = 1.0 - jnp.exp2(-5.0 - jnp.arange(H, dtype=F32))
    i = jnp.arange(S)[:, None]
    j = jnp.arange(S)[None, :]
    decay = jnp.exp(jnp.log(gamma)[:, None, None] * (i - j).astype(F32)[None])
    decay = jnp.where((j <= i)[None], decay, 0.0)                   # [H, S, S]
    s = ein("bhid,bhjd->bhij", x["q"], x["k"]) * decay[None]
    norm = jnp.maximum(jnp.sum(jnp.abs(s), axis=-1, keepdims=True), 1.0)
    p = bf(s / norm)
    return {"out": ein("bhij,bhjd->bhid", p, x["v"])}


def w16p(x, d, c):
    S = d["S"]
    a = jax.nn.sigmoid(f(x["A_log"]))
    cs = jnp.cumsum(jnp.log(a + 1e-8), axis=-1)                      # [B, H, S]
    tril = jnp.tril(jnp.ones((S, S), bool))
    L = jnp.exp(jnp.where(tril, cs[..., :, None] - cs[..., None, :], -1e30))
    s = ein("bhid,bhjd->bhij", x["q"], x["k"]) * L
    n = jnp.sum(s, axis=-1, keepdims=True)
    n = jnp.where(jnp.abs(n) < 1e-6, 1.0, n)
    p = bf(s / jnp.maximum(jnp.abs(n), 1.0))
    return {"out": ein("bhij,bhjd->bhid", p, x["v"])}


def w17p(x, d, c):
    # triangle multiplication, outgoing; bf16 where a matmul consumes a value
    pa = f(x["pair_act"])
    act = bf(pa * f(x["mask"])[..., None])
    mm = lambda a, w: ein("ijc,cd->ijd", a, x[w])
    left = bf(mm(act, "left_proj_w") * jax.nn.sigmoid(mm(act, "left_gate_w")))
    right = bf(mm(act, "right_proj_w") * jax.nn.sigmoid(mm(act, "right_gate_w")))
    r = ein("ikc,jkc->ijc", left, right)
    y = bf(r / jnp.sqrt(jnp.mean(r * r, axis=-1, keepdims=True) + c["EPS"]) * f(x["center_scale"]))
    return {"out": mm(y, "out_proj_w") * jax.nn.sigmoid(mm(pa, "out_gate_w"))}


# ---- fused (KernelBench level 2) workloads ---------------------------------

def conv2d(x, w):
    """NCHW x OIHW, VALID, stride 1, f32."""
    return jax.lax.conv_general_dilated(f(x), f(w), (1, 1), "VALID",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                        precision=jax.lax.Precision.HIGHEST)


def ch(v, nd=4):
    """A per-channel vector broadcast over NCHW (or NC...) positions."""
    return f(v).reshape((1, -1) + (1,) * (nd - 2))


def w18k(x, d, c):
    z = conv2d(x["x"], x["weight"]) + ch(x["conv_bias"])
    return {"out": jax.nn.relu(z) + ch(x["bias"])}


def w19k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": jax.nn.relu((z - c["SUBTRACT_VALUE"]) * c["MULTIPLY_VALUE"])}


def w20k(x, d, c):
    z = (ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])) * c["MULTIPLIER"]
    return {"out": jnp.where(z >= 0, z, c["NEGATIVE_SLOPE"] * z)}


def w21k(x, d, c):
    z = ein("bi,hi->bh", x["x"], x["weight"])        # x @ weight.T
    return {"out": c["SCALING_FACTOR"] * jnp.sum(z / 2.0, axis=1)}


def w22k(x, d, c):
    z = conv2d(x["x"], x["weight"]) + ch(x["conv_bias"])
    mean = jnp.mean(z, axis=(2, 3), keepdims=True)
    var = jnp.var(z, axis=(2, 3), keepdims=True)
    y = (z - mean) / jnp.sqrt(var + c["EPS"]) * ch(x["in_weight"]) + ch(x["in_bias"])
    return {"out": y / c["DIVIDE_BY"]}


def w23k(x, d, c):
    lse = jax.scipy.special.logsumexp
    z = ein("bi,oi->bo", x["x"], x["weight"]) + f(x["bias"])
    s = jnp.sum(z, axis=1, keepdims=True)
    s = jnp.max(s, axis=1, keepdims=True)
    s = jnp.mean(s, axis=1, keepdims=True)
    s = lse(s, axis=1, keepdims=True)
    s = lse(s, axis=1, keepdims=True)
    return {"out": s[:, 0]}



def mish(v):
    return v * jnp.tanh(jax.nn.softplus(v))


def w24k(x, d, c):
    z = (ein("bi,hi->bh", x["x"], x["weight"]) + f(x["bias"])) * c["SCALE_FACTOR"]
    z = z + z
    z = jnp.clip(z, c["CLAMP_MIN"], c["CLAMP_MAX"])
    l = jax.scipy.special.logsumexp(z, axis=1)
    return {"out": l * mish(l)}


def w25k(x, d, c):
    z = jax.lax.conv_general_dilated(f(x["x"]), f(x["weight"]), (1, 1, 1), "VALID",
                                     dimension_numbers=("NCDHW", "OIDHW", "NCDHW"),
                                     precision=jax.lax.Precision.HIGHEST)
    z = z + ch(x["conv_bias"], 5)
    N, OC, G = z.shape[0], z.shape[1], d["G"]
    g = z.reshape(N, G, -1)
    mean = jnp.mean(g, axis=-1, keepdims=True)
    var = jnp.var(g, axis=-1, keepdims=True)
    g = ((g - mean) / jnp.sqrt(var + c["EPS"])).reshape(z.shape)
    g = g * ch(x["gamma"], 5) + ch(x["beta"], 5)
    return {"out": jnp.mean(g, axis=(1, 2, 3, 4))}


def w26k(x, d, c):
    z = ein("bi,oi->bo", x["x"], x["bmm_weight"]) + f(x["bmm_bias"])
    n = (z - jnp.mean(z, axis=1, keepdims=True)) / jnp.sqrt(jnp.var(z, axis=1, keepdims=True) + c["EPS"])
    a = n * f(x["in_weight"]) + f(x["in_bias"])
    y = f(x["y"])
    return {"out": (a + y) * y}


def w27k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": mish(mish(z))}


def w28k(x, d, c):
    # ConvTranspose3d from its definition: input position i reaches output
    # i*STRIDE - PAD + k; scatter every kernel tap into a full-size buffer, crop PAD
    xx, w = f(x["x"]), f(x["conv_weight"])
    S, P, K = d["STRIDE"], d["PAD"], d["KSIZE"]
    N, IC, D, H, W = xx.shape
    OC = w.shape[1]
    full = jnp.zeros((N, OC, (D - 1) * S + K, (H - 1) * S + K, (W - 1) * S + K), F32)
    for kd in range(K):
        for kh in range(K):
            for kw in range(K):
                contrib = ein("nidhw,io->nodhw", xx, w[:, :, kd, kh, kw])
                full = full.at[:, :, kd:kd + (D - 1) * S + 1:S, kh:kh + (H - 1) * S + 1:S,
                               kw:kw + (W - 1) * S + 1:S].add(contrib)
    z = full[:, :, P:P + d["OD"], P:P + d["OH"], P:P + d["OW"]] + ch(x["conv_bias"], 5)
    y = (z - jnp.mean(z, axis=-1, keepdims=True)) / jnp.sqrt(jnp.var(z, axis=-1, keepdims=True) + c["EPS"])
    y = y * f(x["ln_weight"]) + f(x["ln_bias"])
    return {"out": jax.nn.gelu(y, approximate=True) * c["SCALING_FACTOR"]}


def w29k(x, d, c):
    z = jax.nn.swish(ein("bi,io->bo", x["x"], x["weight"])) + f(x["bias"])
    B, OUT, G = z.shape[0], z.shape[1], d["G"]
    g = z.reshape(B, G, OUT // G)
    g = (g - jnp.mean(g, axis=-1, keepdims=True)) / jnp.sqrt(jnp.var(g, axis=-1, keepdims=True) + c["EPS"])
    return {"out": g.reshape(B, OUT) * f(x["gn_weight"]) + f(x["gn_bias"])}



def conv3d(x, w):
    """NCDHW x OIDHW, VALID, stride 1, f32."""
    return jax.lax.conv_general_dilated(f(x), f(w), (1, 1, 1), "VALID",
                                        dimension_numbers=("NCDHW", "OIDHW", "NCDHW"),
                                        precision=jax.lax.Precision.HIGHEST)


def gelu_tanh(v):
    """The tanh form, spelled out (not jax.nn.gelu): 0.5 v (1 + tanh(sqrt(2/pi)(v + 0.044715 v^3)))."""
    return 0.5 * v * (1.0 + jnp.tanh(np.sqrt(2.0 / np.pi).astype(np.float32) * (v + 0.044715 * v ** 3)))


def w30k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": z * c["SCALING_FACTOR"] + z}


def w31k(x, d, c):
    z = ein("bi,oi->bo", x["x"], x["gemm_weight"]) + f(x["gemm_bias"])
    mu = jnp.mean(z, axis=0)
    var = jnp.mean((z - mu) ** 2, axis=0)
    n = (z - mu) / jnp.sqrt(var + c["EPS"]) * f(x["bn_weight"]) + f(x["bn_bias"])
    return {"out": jax.nn.relu(gelu_tanh(n))}


def w32k(x, d, c):
    h = bf(jax.nn.sigmoid(ein("bi,hi->bh", x["x"], x["w1"]) + f(x["b1"])))
    y = ein("bh,oh->bo", h, x["w2"]) + f(x["b2"])
    return {"out": jax.scipy.special.logsumexp(y, axis=1)}


def w33k(x, d, c):
    z = conv3d(x["x"], x["weight"]) + ch(x["bias"], 5)
    return {"out": jnp.tanh(mish(z))}


def w34k(x, d, c):
    z = conv2d(x["x"], x["conv_weight"]) + ch(x["conv_bias"])
    y = mish(z)
    mean = jnp.mean(y, axis=(0, 2, 3), keepdims=True)
    var = jnp.mean((y - mean) ** 2, axis=(0, 2, 3), keepdims=True)
    return {"out": (y - mean) / jnp.sqrt(var + c["EPS"]) * ch(x["bn_weight"]) + ch(x["bn_bias"])}


def w35k(x, d, c):
    z = (ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])) * c["SCALING_FACTOR"]
    return {"out": gelu_tanh(jnp.clip(z, c["HARDTANH_MIN"], c["HARDTANH_MAX"]))}


def w36k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": jnp.sum(jax.nn.sigmoid(z), axis=1)}



def w37k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": z * jax.nn.sigmoid(z) * c["SCALING_FACTOR"]}


def uniform24(key, index):
    """The dropout rule's uniform, from its definition (README of 38k): the
    splitmix64 finalizer of key + (index + 1) * golden ratio, top 24 bits / 2^24."""
    with np.errstate(over="ignore"):
        z = np.uint64(key) + (index.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)


def w38k(x, d, c):
    B, OUT = d["B"], d["OUT"]
    z = ein("bi,oi->bo", x["x"], x["weight"]) + f(x["bias"])
    sw = np.asarray(x["seed"]).astype(np.int64) & 0xFFFFFFFF
    key = (int(sw[0]) << 32) | int(sw[1])
    u = uniform24(key, np.arange(B * OUT, dtype=np.uint64).reshape(B, OUT))
    keep = u >= np.float32(c["DROPOUT_P"])
    dz = jnp.where(keep, z / (1.0 - np.float32(c["DROPOUT_P"])), 0.0)
    return {"out": softmax(dz, axis=1)}


def w39k(x, d, c):
    z = conv2d(x["x"], x["weight"]) + ch(x["bias"])
    return {"out": jnp.mean(jax.nn.gelu(z, approximate=True), axis=(2, 3))}


def w40k(x, d, c):
    z = ein("bi,oi->bo", x["x"], x["weight"]) + f(x["linear_bias"])
    B, OUT, G = z.shape[0], z.shape[1], d["G"]
    g = z.reshape(B, G, OUT // G)
    g = (g - jnp.mean(g, axis=-1, keepdims=True)) / jnp.sqrt(jnp.var(g, axis=-1, keepdims=True) + c["EPS"])
    g = g.reshape(B, OUT) * f(x["gn_weight"]) + f(x["gn_bias"])
    m = jnp.min(g, axis=1)                                   # [B]
    return {"out": m[None, :] + f(x["bias"])[:, None]}       # [OUT, B]


def w41k(x, d, c):
    return {"out": jax.nn.relu(ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"]))}



def w42k(x, d, c):
    # gelu(z - each row's max), z = x @ weight + bias, [B, OUT]
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": gelu_tanh(z - jnp.max(z, axis=1, keepdims=True))}


def w43k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    n = (z - f(x["bn_mean"])) / jnp.sqrt(f(x["bn_var"]) + c["BN_EPS"]) * f(x["bn_scale"]) + f(x["bn_bias"])
    return {"out": softmax(f(x["scale"])[0] * n, axis=1)}


def w44k(x, d, c):
    z = (ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])) / c["DIVISOR"]
    return {"out": jax.nn.gelu(z, approximate=True)}


def groupnorm_rows(z, G, eps):
    """Each row of [B, F] in G groups of F/G consecutive features, biased variance."""
    B, F = z.shape
    g = z.reshape(B, G, F // G)
    g = (g - jnp.mean(g, axis=-1, keepdims=True)) / jnp.sqrt(jnp.var(g, axis=-1, keepdims=True) + eps)
    return g.reshape(B, F)


def w45k(x, d, c):
    z = ein("bi,oi->bo", x["x"], x["gemm_weight"]) + f(x["gemm_bias"])
    g = groupnorm_rows(z, d["NUM_GROUPS"], c["EPS"]) * f(x["gn_weight"]) + f(x["gn_bias"])
    sw = jax.nn.swish
    return {"out": sw(sw(g) * f(x["multiply_weight"]))}


def w46k(x, d, c):
    z = conv2d(x["x"], x["conv_weight"]) + ch(x["conv_bias"])
    N, OC, OH, OW = z.shape
    G = d["G"]
    g = z.reshape(N, G, -1)
    g = (g - jnp.mean(g, axis=-1, keepdims=True)) / jnp.sqrt(jnp.var(g, axis=-1, keepdims=True) + c["EPS"])
    g = g.reshape(z.shape) * ch(x["gn_weight"]) + ch(x["gn_bias"])
    t = jnp.tanh(g)
    r = z + t * jnp.clip(t + 3.0, 0.0, 6.0) / 6.0
    return {"out": jax.scipy.special.logsumexp(r, axis=1)}


def w47k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"]) + f(x["add_value"])
    y = jax.nn.gelu(jnp.tanh(jax.nn.swish(z)), approximate=True)
    return {"out": jnp.clip(y, c["CLIP_MIN"], c["CLIP_MAX"])}


def w48k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["linear_bias"])
    n = (z - f(x["bn_mean"])) / jnp.sqrt(f(x["bn_var"]) + c["BN_EPS"]) * f(x["bn_scale"]) + f(x["bn_bias"])
    return {"out": jax.nn.swish((n + f(x["bias"])[0]) / c["DIVIDE_VALUE"])}


def w49k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    K = d["POOL_KERNEL_SIZE"]
    B, OUT = z.shape
    p = jnp.mean(z[:, :(OUT // K) * K].reshape(B, OUT // K, K), axis=-1)
    return {"out": jnp.max(jax.nn.gelu(p, approximate=True) * c["SCALE_FACTOR"], axis=1)}


def w50k(x, d, c):
    z = ein("bi,io->bo", x["x"], x["weight"]) + f(x["bias"])
    return {"out": softmax(gelu_tanh(z), axis=1)}


IMPLS = {k[1:]: v for k, v in sorted(globals().items()) if k.startswith("w") and callable(v)
         and k[1:2].isdigit()}
IMPLS = dict(sorted(IMPLS.items(), key=lambda kv: int(kv[0][:-1])))
ALL = [f"{i}p" for i in range(1, 18)] + [f"{i}k" for i in range(18, 51)]
MISSING = [w for w in ALL if w not in IMPLS]
