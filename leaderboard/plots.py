"""The harness's pictures (matplotlib, Agg): what matters on linear axes.

plot_leaderboard: per size, each op's time ratio to torch.sum and its read
bandwidth as a fraction of the measured read ceiling (on the CPU, GB/s),
the 1.0x line and the ceiling drawn; the slow teaching rungs go to a side
panel so the fast ops stay apart. plot_shapes: per target, redux's ratio to
torch.sum against the goal and the read floor; a goal that lies below the
row's read floor (no kernel that reads its input can meet it) is drawn as
such, not as a miss. plot_record redraws either picture from its JSON record.
"""
import json

from leaderboard import stats
from redux.variants import BASELINE

# Ops slower than this (geomean x torch.sum) go to the side panel.
SLOW_RATIO = 1.5
MARKERS = "osD^v<>Ph*X"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _split_fast_slow(results):
    from leaderboard.report import ranked_names
    fast, slow = [], []
    for name in ranked_names(results):
        e = results["ops"][name]
        if e.get("ratio_to_torch") is None:
            continue
        (fast if e["ratio_to_torch"] <= SLOW_RATIO or name == BASELINE else slow).append(name)
    return fast, slow


def _style(i, name):
    strong = name in ("sum", BASELINE)
    return dict(marker=MARKERS[i % len(MARKERS)], linewidth=2.6 if strong else 1.3, markersize=7 if strong else 5,
                linestyle="--" if name == BASELINE else "-", color="black" if name == BASELINE else f"C{i % 10}",
                label=name)


def plot_leaderboard(results, path):
    plt = _pyplot()
    sizes = results["sizes"]
    xs = list(range(len(sizes)))
    labels = [f"{s / 1e6:.2f}M" if s >= 1e5 else f"{s:,}" for s in sizes]
    fast, slow = _split_fast_slow(results)
    bw = results["read_bandwidth_Bps"]
    if slow:
        fig, (ax_r, ax_b, ax_s) = plt.subplots(1, 3, figsize=(17, 6), gridspec_kw={"width_ratios": [3, 3, 1.6]})
    else:
        fig, (ax_r, ax_b) = plt.subplots(1, 2, figsize=(14, 6))
    for i, name in enumerate(fast):
        e = results["ops"][name]
        ax_r.plot(xs, [e["ratios_to_torch"][str(s)] for s in sizes], **_style(i, name))
        if bw:
            ax_b.plot(xs, [e["fraction_of_read_bw"][str(s)] for s in sizes], **_style(i, name))
        else:
            ax_b.plot(xs, [s * 4 / e["benchmarks"][str(s)][stats.ROBUST] for s in sizes], **_style(i, name))
    ax_r.axhline(1.0, color="gray", linewidth=1)
    ax_r.set_ylabel(f"time / torch.sum's time ({stats.ROBUST}s)")
    ax_r.set_title("ratio to torch.sum (lower is faster)")
    if bw:
        ax_b.axhline(1.0, color="red", linewidth=1.2, label=f"read ceiling {bw / 1e12:.2f} TB/s")
        ax_b.set_ylim(0, 1.08)
        ax_b.set_ylabel("achieved read bandwidth / measured read ceiling")
        ax_b.set_title("fraction of the read ceiling (higher is better)")
    else:
        ax_b.set_ylabel("GB/s (no GPU: no ceiling measured)")
        ax_b.set_title("read bandwidth (higher is better)")
    for ax in (ax_r, ax_b):
        ax.set_xticks(xs, labels)
        ax.set_xlabel("float32 elements")
        ax.grid(True, alpha=0.3)
    ax_b.legend(fontsize=8, loc="lower right")
    if slow:
        ratios = [results["ops"][n]["ratio_to_torch"] for n in slow]
        ax_s.barh(range(len(slow)), ratios, color="C7")
        ax_s.set_yticks(range(len(slow)), slow, fontsize=8)
        ax_s.set_xscale("log")
        ax_s.axvline(1.0, color="gray", linewidth=1)
        for k, r in enumerate(ratios):
            ax_s.text(r, k, f" {r:.1f}x", va="center", fontsize=8)
        ax_s.set_title(f"slow rungs (> {SLOW_RATIO}x torch.sum)\ngeomean ratio, log scale", fontsize=9)
    fig.suptitle(f"redux sum variants vs torch.sum: {results['device']} ({results['mode']} mode, "
                 f"commit {results.get('commit')})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _shapes_color(row):
    """Green: goal met; orange: goal below the read floor; red: missed; blue: no ratio goal."""
    if "pass" not in row:
        return "C0"
    if row.get("pass"):
        return "C2"
    if row.get("target") is not None and row.get("floor_ratio") is not None and row["target"] < row["floor_ratio"]:
        return "C1"
    return "C3"


def plot_shapes(rows, path, title):
    """rows: shapes.py's GPU rows (label, ratio, floor_ratio, target, pass)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 2.2))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r["ratio"] for r in rows], color=[_shapes_color(r) for r in rows], alpha=0.75,
            label="redux / torch.sum")
    ax.scatter([r["floor_ratio"] for r in rows], ys, marker="x", color="black", zorder=3,
               label="read floor / torch.sum")
    goals = [(r["target"], y) for r, y in zip(rows, ys) if r.get("target")]
    ax.scatter([g for g, _ in goals], [y for _, y in goals], marker="|", s=300, color="C1", zorder=3, label="goal")
    ax.axvline(1.0, color="gray", linewidth=1)
    ax.set_yticks(ys, [r["label"] for r in rows], fontsize=8)
    ax.set_xlabel(f"time ratio to torch.sum ({stats.ROBUST}s; green: goal met, orange: goal below the read floor, "
                  "red: missed, blue: no ratio goal)", fontsize=8)
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_record(record_path, png_path, title=None):
    """Draws a saved record again: leaderboard.json (plot_leaderboard) or
    shapes.json (plot_shapes). Returns the kind of record drawn."""
    with open(record_path) as f:
        try:
            record = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{record_path}: not a JSON record ({e})") from None
    if isinstance(record, dict) and "ops" in record and "sizes" in record:
        plot_leaderboard(record, png_path)
        return "leaderboard"
    if isinstance(record, dict) and "rows" in record:
        plot_shapes(record["rows"], png_path, title or "redux performance targets")
        return "shapes"
    raise ValueError(f"{record_path}: neither a leaderboard.json nor a shapes.json record")


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m leaderboard plot",
                                 description="Draw a saved leaderboard.json or shapes.json record as a PNG.")
    ap.add_argument("record", help="leaderboard.json or shapes.json")
    ap.add_argument("png", help="the picture to write")
    ap.add_argument("--title", default=None, help="title of a shapes picture (e.g. the GPU's name)")
    args = ap.parse_args(argv)
    try:
        kind = plot_record(args.record, args.png, args.title)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    print(f"drew {args.record} ({kind}) to {args.png}")
    return 0
