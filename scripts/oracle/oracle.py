#!/usr/bin/env python3
"""The independent oracle (issue 34): golden outputs from JAX on the CPU.

For each workload it implements (impls.py: the project's own JAX code, written
from the workload's README, not from the C reference), this script

  1. asks `build/ckbench __oracle-dump WORKLOAD SEED DIR` for ckbench's own inputs
     at small size for seeds 1 and 2 (raw little-endian files and manifest.json,
     src/workloads/oracle.h), with the C reference's outputs for comparison;
  2. computes the outputs with JAX and compares them, every element, with the C
     reference's under the workload's tolerance (printed: the agreement found);
  3. writes tests/fixtures/oracle/<workload>.json (a workload with several input
     configurations: that for its first, <workload>.<config>.json for each other,
     each dumped with `__oracle-dump ... small CONFIG`): the input digest, the output
     shapes, about 72 sampled elements (first, last, the 8 largest |x|, evenly
     spaced and pseudo-random indices) with the JAX values, and sum / sum |x| /
     max |x|.

The test `oracle_fixtures_match_reference_and_baseline` (tests/test_oracle.c)
holds the reference and the baseline to those fixtures, without JAX.

A workload whose JAX and C outputs disagree beyond tolerance gets no fixture
(unless --write-disagreeing): the disagreement is a finding to investigate
(which side follows the definition?), never a reason to bend the JAX code.

Usage (from anywhere; the venv build/oracle-venv is made on first use):
  scripts/oracle/oracle.py                  # every implemented workload
  scripts/oracle/oracle.py 8p 12p           # some
  scripts/oracle/oracle.py --check 8p       # compare only, write nothing
  scripts/oracle/oracle.py --list           # implemented and missing workloads
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV = os.path.join(ROOT, "build", "oracle-venv")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "oracle")
SEEDS = (1, 2)
NSAMPLES = 64


def ensure_venv():
    """Re-executes this script under build/oracle-venv, making it (pip install jax) first."""
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(py):
        print(f"oracle: making {VENV} (pip install jax numpy)", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "jax", "numpy"])
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def load_dump(d):
    import numpy as np
    with open(os.path.join(d, "manifest.json")) as f:
        m = json.load(f)
    arrays = {}
    for t in m["tensors"]:
        raw = open(os.path.join(d, t["file"]), "rb").read()
        shape = tuple(t["shape"])
        if t["dtype"] == "bf16":
            u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            a = u.view(np.float32)
        elif t["dtype"] == "f32":
            a = np.frombuffer(raw, dtype="<f4")
        else:
            a = np.frombuffer(raw, dtype="<i4")
        arrays[t["name"]] = a.reshape(shape).copy()
    return m, arrays


def sample_indices(n, name):
    """Deterministic: first, last, evenly spaced and seeded pseudo-random flat indices."""
    import numpy as np
    even = np.linspace(0, n - 1, num=min(n, NSAMPLES // 2)).round().astype(np.int64)
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    rnd = np.random.default_rng(seed).integers(0, n, size=min(n, NSAMPLES - len(even)))
    return sorted(set(int(i) for i in even) | set(int(i) for i in rnd) | {0, n - 1})


def allclose_report(got, want, atol, rtol):
    """(bad count, worst flat index, got, want) of |got-want| <= atol + rtol*|want|."""
    import numpy as np
    g = got.astype(np.float64).ravel()
    w = want.astype(np.float64).ravel()
    err = np.abs(g - w) - (atol + rtol * np.abs(w))
    bad = ~(err <= 0) & ~(np.isnan(g) & np.isnan(w))
    nbad = int(bad.sum())
    ratio = np.abs(g - w) / (atol + rtol * np.abs(w))
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    worst = int(np.argmax(ratio))
    return nbad, worst, float(g[worst]), float(w[worst]), float(ratio[worst])


def run_one(wid, impl, bin_path, check_only, write_disagreeing, seeds=SEEDS):
    """Every configuration of wid (the first dump names them all): one fixture each."""
    with tempfile.TemporaryDirectory(prefix="ckb-oracle-") as d:
        subprocess.check_call([bin_path, "__oracle-dump", wid, str(seeds[0]), d])
        with open(os.path.join(d, "manifest.json")) as f:
            configs = json.load(f).get("configs") or [""]
    agree = True
    for k, config in enumerate(configs):
        agree &= run_config(wid, impl, bin_path, check_only, write_disagreeing, seeds, config,
                            k == 0)
    return agree


def run_config(wid, impl, bin_path, check_only, write_disagreeing, seeds, config, first):
    import numpy as np
    import jax
    seeds_out, agree, full_id = [], True, None
    for seed in seeds:
        with tempfile.TemporaryDirectory(prefix="ckb-oracle-") as d:
            subprocess.check_call([bin_path, "__oracle-dump", wid, str(seed), d] +
                                  (["small", config] if config else []))
            m, arrs = load_dump(d)
        # the first configuration keeps the id (and so its sampled indices)
        full_id = m["workload"] + ("" if first else "/" + config)
        ins = {t["name"]: arrs[t["name"]] for t in m["tensors"] if t["role"] == "in"}
        outs = impl(ins, m["dims"], m["consts"])
        entry = {"seed": seed, "input_digest": m["input_digest"], "outputs": []}
        for t in m["tensors"]:
            if t["role"] != "out":
                continue
            o = np.asarray(jax.device_get(outs[t["name"]]))
            if t["dtype"] == "bf16":  # the workload's output is bf16: round once, to nearest even
                o = np.asarray(jax.numpy.asarray(o, jax.numpy.float32).astype(jax.numpy.bfloat16)
                               .astype(jax.numpy.float32))
            o = o.astype(np.float64).reshape(tuple(t["shape"]))
            ref = arrs[t["name"]]
            nbad, worst, g, w, ratio = allclose_report(ref, o, m["atol"], m["rtol"])
            n = o.size
            status = "agree" if nbad == 0 else "DISAGREE"
            print(f"  {full_id} seed {seed} {t['name']}: C reference vs JAX {status}: "
                  f"{nbad}/{n} beyond tol (atol {m['atol']:g}, rtol {m['rtol']:g}); "
                  f"worst {[int(i) for i in np.unravel_index(worst, o.shape)]} C {g:.6g} JAX {w:.6g} "
                  f"({ratio:.2f} of tol); max |diff| {float(np.nanmax(np.abs(ref.astype(np.float64) - o))):.3g}")
            agree &= nbad == 0
            flat = o.ravel()
            idx = sample_indices(n, f"{full_id}/{t['name']}")
            # and the 8 largest |x|: where most elements are below atol (a softmax
            # over 512 columns), the large ones are those the tolerance can see
            top = np.argsort(-np.abs(flat), kind="stable")[:8]
            idx = sorted(set(idx) | set(int(i) for i in top))
            entry["outputs"].append({
                "name": t["name"], "dtype": t["dtype"], "shape": t["shape"],
                "index": idx, "value": [float(flat[i]) for i in idx],
                "sum": float(flat.sum()), "sum_abs": float(np.abs(flat).sum()),
                "max_abs": float(np.abs(flat).max()),
            })
        seeds_out.append(entry)
    if check_only:
        return agree
    if not agree and not write_disagreeing:
        print(f"  {full_id}: NO fixture written (JAX and the C reference disagree: investigate)")
        return agree
    fx = {
        "workload": m["workload"],
        **({"config": config} if config else {}),
        "size": "small",
        "generator": "scripts/oracle/oracle.py (JAX " + jax.__version__ + ", CPU)",
        "note": "golden outputs from an independent JAX implementation; regenerate with "
                "scripts/oracle/oracle.py " + wid,
        "jax_vs_c_reference": "agree" if agree else "DISAGREE",
        "seeds": seeds_out,
    }
    os.makedirs(FIXTURES, exist_ok=True)
    # the first configuration keeps the workload's own file name
    path = os.path.join(FIXTURES, m["workload"] + ("" if first else "." + config) + ".json")
    text = json.dumps(fx, indent=1)
    # lists of numbers on one line each: compact, and a diff still shows what moved
    text = re.sub(r"\[\s*([-0-9.eE+,\s]+?)\s*\]",
                  lambda mo: "[" + ",".join(v.strip() for v in mo.group(1).split(",")) + "]", text)
    with open(path, "w") as f:
        f.write(text + "\n")
    print(f"  wrote {os.path.relpath(path, ROOT)}")
    return agree


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="*", help="ids or number prefixes (default: every implemented one)")
    ap.add_argument("--check", action="store_true", help="compare only; write no fixture")
    ap.add_argument("--write-disagreeing", action="store_true",
                    help="write a fixture even where JAX and the C reference disagree")
    ap.add_argument("--seeds", help="with --check: other seeds to compare, e.g. 3,4,5 "
                    "(fixtures are always seeds 1 and 2)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "ckbench"))
    a = ap.parse_args()
    ensure_venv()
    import jax
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_default_matmul_precision", "highest")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import impls
    if a.list:
        print("implemented:", " ".join(impls.IMPLS))
        print("missing:", " ".join(impls.MISSING))
        return 0
    if not os.access(a.bin, os.X_OK):
        print(f"oracle: {a.bin} not found: run make first", file=sys.stderr)
        return 2
    if a.seeds and not a.check:
        print("oracle: --seeds only with --check", file=sys.stderr)
        return 2
    seeds = tuple(int(v) for v in a.seeds.split(",")) if a.seeds else SEEDS
    names = a.workloads or list(impls.IMPLS)
    bad = []
    for wid in names:
        key = wid.split("_")[0]
        if key not in impls.IMPLS:
            print(f"oracle: {wid}: no JAX implementation", file=sys.stderr)
            bad.append(wid)
            continue
        if not run_one(key, impls.IMPLS[key], a.bin, a.check, a.write_disagreeing, seeds):
            bad.append(wid)
    if bad:
        print("disagreeing or missing:", " ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
