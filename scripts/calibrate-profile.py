#!/usr/bin/env python3
# Prints the calibrated efficiency fields of a hardware profile from the microbenchmark tables
# in calibration/microbench/ (docs/calibration.md): gemm.max_fraction from a MAMF best-shape
# row and the profile's tile/wave/fill model, hbm.efficiency from a streaming row,
# scale_up.efficiency from a ring busbw row (with the ring's local last step), attention_fraction from a cuDNN SDPA row; then
# the held-out rows with the model's error on each. Reads only the repository's files.
# Usage: scripts/calibrate-profile.py PROFILE   (h200-sxm, h800-sxm, b200, gb200)
import math
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLES = ROOT / "calibration" / "microbench"


def entries():
    out = {}
    for f in sorted(TABLES.glob("*.yaml")):
        for e in yaml.safe_load(f.read_text()):
            out[e["id"]] = e
    return out


def rows(e):
    t = e["table"]
    return [dict(zip(t["columns"], r)) for r in t["rows"]]


def quantity(text):  # "2250 TFLOP/s", "8 TB/s", "900 GB/s"
    value, unit = text.split()
    scale = {"TFLOP/s": 1e12, "TB/s": 1e12, "GB/s": 1e9}[unit]
    return float(value) * scale


def shape_factor(g, m, n, k):
    # The profile's main (first) CTA tile; calibration/fit/fit_compute.py fits the full
    # tile-choice model (docs/calibration.md, Part 1).
    tile_m, tile_n = (int(x) for x in g["tiles"][0].split("x"))
    tm, tn = math.ceil(m / tile_m), math.ceil(n / tile_n)
    tiles = tm * tn
    waves = math.ceil(tiles / g["compute_units"])
    tile = m * n / (tm * tile_m * tn * tile_n)
    return tile * tiles / (waves * g["compute_units"]) * k / (k + g["k_half"])


def attention(fwd, bwd, peak):  # time-weighted, backward = 2.5x the forward FLOPs
    return 3.5 / (peak / fwd + 2.5 * peak / bwd)


def report(name, fitted, held_out):
    print(f"{name}: {fitted:.3f}")
    for label, model, measured in held_out:
        digits = 3 if measured < 10 else 1
        print(f"    held out {label:<58} model {model:9.{digits}f} measured {measured:9.{digits}f} "
              f"{100 * (model - measured) / measured:+6.1f} %")


# Per profile: the table ids and rows each field is fitted on, and the rows held out.
FITS = {
    "h200-sxm": {"mamf": "mamf-h100_sxm-bf16", "stream": ("gpu-roofline-h200-streaming", None),
                 "ring": ("stas-h200-nvls-vs-ring-16gib", 367.61),
                 "sdpa": ("cudnn-sdpa-h200-llama31-gqa", 8192)},
    "b200": {"mamf": "mamf-b200_sxm-bf16", "stream": ("cudnn-norms-gb200-bf16", None),
             "ring": ("stas-nvls-gain-vs-gpu-count", 682.2),
             "sdpa": ("cudnn-sdpa-b200-fp8-vs-bf16", 8192)},
    "gb200": {"mamf": "mamf-gb200_sxm-bf16", "stream": ("cudnn-norms-gb200-bf16", None),
              "ring": None, "sdpa": ("cudnn-sdpa-gb200-llama31-gqa", 8192)},
    "h800-sxm": {"mamf": None, "stream": None, "ring": ("h800-nvlink-measured", 160.0),
                 "sdpa": None},
}


def gemm(e, p, fit):
    g = p["gemm"]
    peak = quantity(p["peak"]["bf16"])
    s = e[fit["mamf"]]["shape"]
    frac = e[fit["mamf"]]["value"] * 1e12 / peak / shape_factor(g, s["M"], s["N"], s["K"])
    held = []
    if p["name"] == "b200":
        for r in rows(e["xla-perf-table-b200-gemm"]):
            if r["b"] == 1 and min(r["m"], r["n"], r["k"]) >= 2048:
                model = frac * shape_factor(g, r["m"], r["n"], r["k"]) * peak / 1e12
                held.append((f"xla b200 {r['m']}x{r['n']}x{r['k']}", model, r["bf16_tflops"]))
    report("gemm.max_fraction", frac, held)


def large_norm_rows(e, table):
    return [r for r in rows(e[table]) if r["backend"] == "cudnn" and r["N"] >= 4096 and r["C"] >= 4096]


def hbm(e, p, fit):
    bw = quantity(p["hbm"]["bandwidth"]) / 1e9
    table = fit["stream"][0]
    if table.startswith("gpu-roofline"):
        vals = [r["GBps"] for r in rows(e[table])][:5]
        frac = sum(vals) / len(vals) / bw
        held = [("gpu-stream-h200 triad, full occupancy", frac * bw, rows(e["gpu-stream-h200"])[-1]["triad"])]
        held += [(f"cudnn norm fwd {r['config']}", frac * bw, r["fwd_GBps"])
                 for r in large_norm_rows(e, "cudnn-norms-h200-bf16")]
    else:
        fwd = [r["fwd_GBps"] for r in large_norm_rows(e, table)]
        frac = sum(fwd) / len(fwd) / bw
        held = [(f"cudnn norm bwd {r['config']}", frac * bw, r["bwd_GBps"])
                for r in large_norm_rows(e, table)]
    report("hbm.efficiency", frac, held)


def ring_busbw(link_rate, hbm_rate, n):
    """nccl-tests busbw of a ring all-reduce on n GPUs: 2(n-1) sending steps at the link rate
    and a local last step per loop, a copy at the HBM rate (docs/collectives.md section 1)."""
    k = 2 * (n - 1)
    return link_rate * k / (k + 2 * link_rate / hbm_rate)


def link(e, p, fit):
    bw = quantity(p["scale_up"]["bandwidth"]) / 1e9
    table, measured = fit["ring"]
    hbm_rate = quantity(p["hbm"]["bandwidth"]) / 1e9 * p["hbm"]["efficiency"]
    # A ring busbw row (8 GPUs, 14 sending steps) gives the link rate by inverting ring_busbw;
    # a link measurement (h800-nvlink-measured) is the rate itself.
    rate = 14 * measured / (14 - 2 * measured / hbm_rate) if table.startswith("stas-") else measured
    frac = rate / bw
    held = []
    if table == "stas-nvls-gain-vs-gpu-count":
        system = "B200" if p["name"] == "b200" else "H200"
        held = [(f"{system} ring, {r['gpus']} GPUs", ring_busbw(rate, hbm_rate, r["gpus"]),
                 r["busbw_nvls_off_GBps"])
                for r in rows(e[table]) if r["system"] == system and r["gpus"] < 8]
    report("scale_up.efficiency", frac, held)


def sdpa(e, p, fit):
    peak = quantity(p["peak"]["bf16"]) / 1e12
    table, seq = fit["sdpa"]
    def frac_at(r):
        return attention(r["fwd"], r["bwd"], peak)
    by_seq = {}
    for r in rows(e[table]):
        dtype = r.get("dtype")
        if dtype not in ("bf16", "bfloat16") or r.get("mask", "causal") != "causal":
            continue
        d = by_seq.setdefault(r["seqlen"], {})
        if "pass" in r:
            d[r["pass"]] = r["tflops"]
        else:
            d["fwd"], d["bwd"] = r["fwd_tflops"], r["bwd_tflops"]
    frac = frac_at(by_seq[seq])
    held = [(f"{table} seqlen {s}", frac, frac_at(v)) for s, v in sorted(by_seq.items()) if s != seq]
    report("attention_fraction", frac, held)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in FITS:
        sys.exit(f"usage: {sys.argv[0]} PROFILE  (one of: {', '.join(FITS)})")
    e = entries()
    p = yaml.safe_load((ROOT / "hwprofiles" / f"{sys.argv[1]}.yaml").read_text())
    fit = FITS[sys.argv[1]]
    for field, fn in (("mamf", gemm), ("stream", hbm), ("ring", link), ("sdpa", sdpa)):
        if fit[field]:
            fn(e, p, fit)


if __name__ == "__main__":
    main()
