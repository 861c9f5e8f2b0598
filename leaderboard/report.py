"""The leaderboard's report: summary numbers per op, the ranked table for
the terminal and markdown, the JSON and the plot."""
import json
import math
import os

from redux.variants import BASELINE


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(results):
    """Adds per-op summary numbers: geometric mean, ranked score, ratios."""
    sizes = results["sizes"]
    base = results["ops"].get(BASELINE, {}).get("benchmarks", {})
    for name, e in results["ops"].items():
        means = [e["benchmarks"].get(str(s), {}).get("mean") for s in sizes]
        e["geomean_ns"] = geomean(means) if e["correct"] and all(means) else None
        last = str(max(sizes))
        e["score_ns"] = e["benchmarks"].get(last, {}).get("mean") if e["correct"] else None
        ratios = [e["benchmarks"][str(s)]["mean"] / base[str(s)]["mean"]
                  for s in sizes if e["correct"] and str(s) in base and "mean" in base[str(s)]
                  and "mean" in e["benchmarks"].get(str(s), {})]
        e["ratio_to_torch"] = geomean(ratios)
        if e["score_ns"]:
            gbps = max(sizes) * 4 / e["score_ns"]  # bytes / ns = GB/s
            e["score_GBps"] = gbps
            bw = results["read_bandwidth_Bps"]
            e["score_fraction_of_read_bw"] = gbps * 1e9 / bw if bw else None


def ranked_names(results):
    def key(item):
        e = item[1]
        return (0, e["score_ns"]) if e["score_ns"] else (1, float("inf"))
    return [n for n, _ in sorted(results["ops"].items(), key=key)]


def table_rows(results):
    sizes = results["sizes"]
    header = (["rank", "op", "ok", "det"] + [f"{s/1e6:.2f}M us" if s >= 1e5 else f"{s} us" for s in sizes]
              + ["GB/s", "of read BW", "x torch", "geomean us", "score us"])
    rows = []
    for rank, name in enumerate(ranked_names(results), 1):
        e = results["ops"][name]
        cells = [str(rank), name, "yes" if e["correct"] else "NO", "yes" if e["deterministic"] else "no"]
        for s in sizes:
            b = e["benchmarks"].get(str(s), {})
            cells.append(f"{b['mean'] / 1e3:.2f}" if "mean" in b else "-")
        cells.append(f"{e['score_GBps']:.0f}" if e.get("score_GBps") else "-")
        frac = e.get("score_fraction_of_read_bw")
        cells.append(f"{100 * frac:.1f}%" if frac else "-")
        cells.append(f"{e['ratio_to_torch']:.3f}" if e.get("ratio_to_torch") else "-")
        cells.append(f"{e['geomean_ns'] / 1e3:.2f}" if e.get("geomean_ns") else "-")
        cells.append(f"{e['score_ns'] / 1e3:.2f}" if e.get("score_ns") else "-")
        rows.append(cells)
    return header, rows


def format_terminal(results):
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    bw = results["read_bandwidth_Bps"]
    out = [f"{results['device']}  torch {results['torch']}  mode {results['mode']}"
           + (f"  read bandwidth {bw / 1e12:.2f} TB/s" if bw else "")]
    out += [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for name in ranked_names(results):
        e = results["ops"][name]
        if not e["correct"]:
            bad = {k: v for k, v in {**e["tests"], **{k: b.get("error") for k, b in e["benchmarks"].items()}}.items()
                   if v and v != "pass"}
            out.append(f"  {name}: REJECTED: {next(iter(bad.items()))}")
    out.append(f"score = mean time at {max(results['sizes'])} elements (the ranked number); "
               "x torch = geometric mean of per-size time ratios")
    return "\n".join(out)


def format_markdown(results):
    header, rows = table_rows(results)
    bw = results["read_bandwidth_Bps"]
    md = [f"# Leaderboard: {results['device']}", "",
          f"torch {results['torch']}, mode {results['mode']}"
          + (f", measured read bandwidth {bw / 1e12:.2f} TB/s" if bw else ""), "",
          "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(md) + "\n"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6))
    for name in ranked_names(results):
        e = results["ops"][name]
        pts = [(s, e["benchmarks"][str(s)]["mean"] / 1e3) for s in results["sizes"]
               if "mean" in e["benchmarks"].get(str(s), {})]
        if pts:
            ax.plot(*zip(*pts), marker="o", linewidth=2.5 if name in ("sum", BASELINE) else 1.2,
                    linestyle="--" if name == BASELINE else "-", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("elements (float32)")
    ax.set_ylabel("mean time per call (us)")
    ax.set_title(f"redux sum variants vs torch.sum: {results['device']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(results, out_dir, make_plot=True):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "leaderboard.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "leaderboard.md"), "w") as f:
        f.write(format_markdown(results))
    if make_plot:
        plot(results, os.path.join(out_dir, "leaderboard.png"))


