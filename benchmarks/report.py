"""Result output: the Markdown table (also printed), the JSON record and the ratio bar plot."""

import json
import math
from pathlib import Path

from benchmarks.frameworks import LABELS

LOAD_WARN = 0.15  # foreign CPU share above which a case gets a warning mark


def format_seconds(seconds):
    """3 significant digits in the best of s, ms, µs, ns."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_cell(record, name, skipped):
    """Time cell: median with half-IQR in percent, or why there is no number."""
    res = record["results"].get(name)
    if res is None:
        return "skipped" if name in skipped else "—"
    if res["status"] == "missing":
        return f"n/a (missing in {name})"
    if res["status"] == "error":
        return "error (see JSON)"
    spread = (res["q3_s"] - res["q1_s"]) / 2 / res["median_s"] * 100
    return f"{format_seconds(res['median_s'])} ±{spread:.1f}%"


def format_rate(record, name):
    res = record["results"].get(name)
    if record["metric"] not in ("GB/s", "GFLOP/s") or not res or res["status"] != "ok":
        return "—"
    return f"{res['throughput']:.3g} {record['metric']}"


def geomean_ratio(records):
    """(geometric mean of the defined ratios, how many there were)."""
    ratios = [r["ratio"] for r in records if r["ratio"]]
    if not ratios:
        return None, 0
    return math.exp(sum(math.log(v) for v in ratios) / len(ratios)), len(ratios)


def _header(meta):
    fw = meta["frameworks"]
    versions = ", ".join(f"{LABELS[n]} {v}" for n, v in fw.items())
    lines = [
        f"# OneFlow vs PyTorch: {meta['device']}, {meta['date']} ({meta['mode']} run)",
        "",
        "**Ratio = PyTorch time / OneFlow time: > 1 means OneFlow is faster, < 1 slower.**",
        "",
        f"- Machine: {meta['host_cpu']}, {meta['cpu_count']} CPUs; "
        f"{meta['threads']} threads for every framework",
        f"- Versions: {versions}; Python {meta['python']}; commit {meta['git_commit']}",
        f"- Command: `{meta['command']}`; took {meta['duration_s']:.0f} s; "
        + (
            "all frameworks in one process"
            if meta.get("processes") == "one"
            else "each framework in its own process"
        ),
        f"- Times are medians over {meta['trials']} interleaved trials (import: "
        f"{meta['import_runs']} runs); ±x% is half the inter-quartile range over the median. "
        "Dispatch rows are per op; rates count the bytes moved or flops done per call.",
        f"- Load average at start: {meta['loadavg_at_start']}; other processes used "
        f"{_pct(meta.get('foreign_load'))} of the CPUs during the run.",
    ]
    if meta.get("skipped"):
        for name, why in meta["skipped"].items():
            lines.append(f"- {LABELS[name]} skipped: {why}")
    if meta.get("load_warning"):
        lines.append(f"- **Warning: {meta['load_warning']}**")
    return lines + [""]


def _pct(value):
    return "unknown" if value is None else f"{value * 100:.0f}%"


def markdown(records, meta):
    """The full Markdown report: header, table and geometric-mean line."""
    skipped = meta.get("skipped", {})
    lines = _header(meta)
    lines.append(
        "| Case | OneFlow | PyTorch | NumPy | Ratio (PT/OF) | OneFlow rate | PyTorch rate |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for rec in records:
        mark = " ⚠" if (rec["foreign_load"] or 0) > LOAD_WARN else ""
        ratio = f"{rec['ratio']:.2f}" if rec["ratio"] else "n/a"
        cells = [f"{rec['family']}: {rec['case']}{mark}"]
        cells += [format_cell(rec, n, skipped) for n in ("oneflow", "torch", "numpy")]
        cells += [ratio, format_rate(rec, "oneflow"), format_rate(rec, "torch")]
        lines.append("| " + " | ".join(cells) + " |")
    mean, count = geomean_ratio(records)
    lines.append("")
    if mean:
        lines.append(
            f"**Geometric mean of the ratio over the {count} cases measured in both: "
            f"{mean:.2f}** ({'OneFlow' if mean > 1 else 'PyTorch'} faster overall)."
        )
    else:
        lines.append("**Geometric mean of the ratio: n/a** (no case measured in both).")
    if any((r["foreign_load"] or 0) > LOAD_WARN for r in records):
        lines.append(f"\n⚠ other processes used over {LOAD_WARN:.0%} of the CPUs in that case.")
    return "\n".join(lines) + "\n"


def _na_label(record):
    missing = [n for n, r in record["results"].items() if r.get("status") == "missing"]
    return f" n/a (missing in {', '.join(missing)})" if missing else " n/a"


def plot(records, meta, path):
    """Horizontal bars of the ratios from 1 (log scale), with the geometric mean dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = records[::-1]
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(rows) + 1.6))
    for y, rec in enumerate(rows):
        value = rec["ratio"]
        if value:
            ax.barh(y, value - 1, left=1, color="tab:green" if value >= 1 else "tab:red")
            ax.text(
                value,
                y,
                f" {value:.2f} ",
                va="center",
                ha="left" if value >= 1 else "right",
                fontsize=8,
            )
        else:
            ax.text(1, y, _na_label(rec), va="center", fontsize=8, color="gray")
    ax.set_yticks(range(len(rows)), [f"{r['family']}: {r['case']}" for r in rows], fontsize=8)
    ax.set_xscale("log")
    span = max([abs(math.log10(r["ratio"])) for r in rows if r["ratio"]] + [0.3]) + 0.35
    ax.set_xlim(10**-span, 10**span)
    ax.axvline(1.0, color="black", linewidth=0.8)
    mean, _ = geomean_ratio(records)
    if mean:
        ax.axvline(mean, color="tab:blue", linestyle="--", label=f"geometric mean {mean:.2f}")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("PyTorch time / OneFlow time  (> 1: OneFlow faster)")
    ax.set_title(f"OneFlow vs PyTorch, {meta['device']}, {meta['date']} ({meta['mode']})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save(records, meta, out_dir, stem):
    """Writes ``stem``.md, .json and (with matplotlib installed) .png under ``out_dir``; returns
    the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md_path, json_path, png_path = (out / f"{stem}{ext}" for ext in (".md", ".json", ".png"))
    md_path.write_text(markdown(records, meta), encoding="utf-8")
    payload = {"meta": meta, "cases": records}
    json_path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: no chart (the .md and .json are written)")
        return md_path, json_path
    plot(records, meta, png_path)
    return md_path, json_path, png_path
