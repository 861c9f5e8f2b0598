"""The leaderboard's report: summary numbers per op, the ranked table for
the terminal and markdown, the JSON and the plot.

Times in the table are medians (stats.ROBUST): the ranking and the ratio to
torch.sum use them, so a few outliers on a shared machine cannot flip them.
The score is the competition's statistic, the mean at the largest size.
"""
import json
import math
import os

from leaderboard import stats
from redux.variants import BASELINE

FLAG_REMEASURED, FLAG_NOISY = "*", "!"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _stat(e, size, key):
    return e["benchmarks"].get(str(size), {}).get(key)


def summarize(results):
    """Adds per-op summary numbers: median geomean, ratio to torch.sum (of
    medians), the ranked score (mean at the largest size), bandwidth."""
    sizes, robust = results["sizes"], stats.ROBUST
    base = results["ops"].get(BASELINE, {})
    last = max(sizes)
    for e in results["ops"].values():
        meds = [_stat(e, s, robust) for s in sizes]
        ok = e["correct"] and all(meds)
        e["geomean_ns"] = geomean(meds) if ok else None
        e["score_ns"] = _stat(e, last, "mean") if e["correct"] else None
        ratios = [_stat(e, s, robust) / _stat(base, s, robust) for s in sizes
                  if ok and base and _stat(base, s, robust)]
        e["ratio_to_torch"] = geomean(ratios)
        e["ratios_to_torch"] = {str(s): _stat(e, s, robust) / _stat(base, s, robust) for s in sizes
                                if ok and base and _stat(base, s, robust)}
        bw = results["read_bandwidth_Bps"]
        e["fraction_of_read_bw"] = {str(s): s * 4 / _stat(e, s, robust) * 1e9 / bw for s in sizes
                                    if ok and bw}
        med_last = _stat(e, last, robust) if ok else None
        e["GBps"] = last * 4 / med_last if med_last else None  # bytes / ns = GB/s
        e["score_fraction_of_read_bw"] = e["GBps"] * 1e9 / bw if e["GBps"] and bw else None


def ranked_names(results):
    """Fastest first by the median at the largest size; incorrect ops last."""
    last = str(max(results["sizes"]))

    def key(item):
        med = item[1]["benchmarks"].get(last, {}).get(stats.ROBUST) if item[1]["correct"] else None
        return (0, med) if med else (1, float("inf"))
    return [n for n, _ in sorted(results["ops"].items(), key=key)]


def _time_cell(b):
    if stats.ROBUST not in b:
        return "-"
    flag = FLAG_NOISY if b.get("noisy") else FLAG_REMEASURED if b.get("remeasured") else ""
    return f"{b[stats.ROBUST] / 1e3:.2f}{flag}"


def table_rows(results):
    sizes = results["sizes"]
    header = (["rank", "op", "ok", "det"] + [f"{s/1e6:.2f}M" if s >= 1e5 else f"{s}" for s in sizes]
              + ["GB/s", "of read BW", "x torch", "best us", "score us"])
    rows = []
    last = str(max(sizes))
    for rank, name in enumerate(ranked_names(results), 1):
        e = results["ops"][name]
        cells = [str(rank), name, "yes" if e["correct"] else "NO", "yes" if e["deterministic"] else "no"]
        cells += [_time_cell(e["benchmarks"].get(str(s), {})) for s in sizes]
        cells.append(f"{e['GBps']:.0f}" if e.get("GBps") else "-")
        frac = e.get("score_fraction_of_read_bw")
        cells.append(f"{100 * frac:.1f}%" if frac else "-")
        cells.append(f"{e['ratio_to_torch']:.3f}" if e.get("ratio_to_torch") else "-")
        best = e["benchmarks"].get(last, {}).get("best") if e["correct"] else None
        cells.append(f"{best / 1e3:.2f}" if best else "-")
        cells.append(f"{e['score_ns'] / 1e3:.2f}" if e.get("score_ns") else "-")
        rows.append(cells)
    return header, rows


def legend(results):
    last = max(results["sizes"])
    return [f"per-size columns: the {stats.ROBUST} time per call, us; rank and 'x torch' (geometric mean of "
            f"per-size ratios to torch.sum) use the {stats.ROBUST}, which a few outliers cannot flip",
            f"score = the competition's statistic: the mean time at {last:,} elements; best = fastest call there; "
            f"GB/s and 'of read BW' from the {stats.ROBUST} there",
            f"{FLAG_REMEASURED} = the cell's first samples were noisy ({stats.NOISE_RULE}) and it was measured "
            f"again; {FLAG_NOISY} = still noisy after that: read it with care"]


def format_terminal(results):
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    bw = results["read_bandwidth_Bps"]
    out = [f"{results['device']}  torch {results['torch']}  commit {results.get('commit')}  mode {results['mode']}"
           + (f"  read bandwidth {bw / 1e12:.2f} TB/s" if bw else "")]
    out += [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for name in ranked_names(results):
        e = results["ops"][name]
        if not e["correct"]:
            bad = {k: v for k, v in {**e["tests"], **{k: b.get("error") for k, b in e["benchmarks"].items()}}.items()
                   if v and v != "pass"}
            out.append(f"  {name}: REJECTED: {next(iter(bad.items()))}")
    return "\n".join(out + legend(results))


def format_markdown(results):
    header, rows = table_rows(results)
    bw = results["read_bandwidth_Bps"]
    md = [f"# Leaderboard: {results['device']}", "",
          f"torch {results['torch']}, commit {results.get('commit')}, mode {results['mode']}"
          + (f", measured read bandwidth {bw / 1e12:.2f} TB/s" if bw else ""), "",
          "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(md + [""] + [f"- {x}" for x in legend(results)]) + "\n"


def write_outputs(results, out_dir, make_plot=True):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "leaderboard.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "leaderboard.md"), "w") as f:
        f.write(format_markdown(results))
    if make_plot:
        from leaderboard import plots
        plots.plot_leaderboard(results, os.path.join(out_dir, "leaderboard.png"))
