"""Charts of a report (model.Chart) drawn with matplotlib, as SVG (inlined in the HTML report, so
it opens with no network and no script) and PNG.

Data per kind:
    lines     {"x_label", "y_label", "series": [{"name", "x": [...], "y": [...]}]}
    stacked   {"x_label", "y_label", "x": [...], "layers": [{"name", "y": [...]}]}
    bars      {"x_label", "y_label", "labels": [...], "values": [...]}
    timeline  {"lanes": [...], "bars": [{"lane", "start", "end", "submit", "kind", "label"}]}
    scaling   {"nodes": [...], "jobs_per_h": [...], "efficiency": [...]}
Times on x axes are seconds from the workload's start.
"""
from __future__ import annotations

import io

from statgrid.report.model import Chart

KIND_COLORS = {"io": "#1f77b4", "cpu": "#d62728", "memory": "#2ca02c"}
LAYER_COLORS = {"user": "#d62728", "sys": "#ff9896", "wait": "#9467bd", "idle": "#dddddd"}


def _figure(chart: Chart):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "statgrid"     # stable element ids: same data, same SVG
    import matplotlib.pyplot as plt

    d = chart.data
    fig, ax = plt.subplots(figsize=(9, 3.6 if chart.kind != "timeline" else 1.2 + 0.45 * len(d.get("lanes", []))))
    if chart.kind == "lines":
        for s in d["series"]:
            ax.plot(s["x"], s["y"], label=s["name"], linewidth=1.2, linestyle=s.get("style", "-"))
        if len(d["series"]) > 1:
            ax.legend(fontsize=8, loc="upper right")
    elif chart.kind == "stacked":
        ax.stackplot(d["x"], *[layer["y"] for layer in d["layers"]], labels=[layer["name"] for layer in d["layers"]],
                     colors=[LAYER_COLORS.get(layer["name"], None) for layer in d["layers"]])
        ax.set_ylim(0, 100)
        ax.legend(fontsize=8, loc="upper right")
    elif chart.kind == "bars":
        ax.bar(range(len(d["labels"])), d["values"], color="#1f77b4")
        crowded = len(d["labels"]) > 4
        ax.set_xticks(range(len(d["labels"])), d["labels"], fontsize=8, rotation=20 if crowded else 0,
                      ha="right" if crowded else "center")
    elif chart.kind == "timeline":
        lanes = d["lanes"]
        for b in d["bars"]:
            y = lanes.index(b["lane"])
            if b.get("submit") is not None and b["submit"] < b["start"]:
                ax.plot([b["submit"], b["start"]], [y, y], color="#999999", linewidth=0.8)   # waiting in the queue
            ax.barh(y, b["end"] - b["start"], left=b["start"], height=0.6, color=KIND_COLORS.get(b["kind"], "#7f7f7f"),
                    edgecolor="white", linewidth=0.5)
        ax.set_yticks(range(len(lanes)), lanes, fontsize=7)
        ax.invert_yaxis()
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=c, label=k) for k, c in KIND_COLORS.items()], fontsize=8, loc="lower right")
    elif chart.kind == "scaling":
        runs = d["runs"]                                       # one test, or several overlaid (--compare)
        first = runs[0]
        nodes = sorted({n for r in runs for n in r["nodes"]})
        ideal = [first["jobs_per_h"][0] * n / first["nodes"][0] for n in nodes] if first["jobs_per_h"] else []
        ax.plot(nodes, ideal, linestyle=":", color="#999999", label="linear")
        ax.set_xticks(nodes)
        ax2 = ax.twinx()
        for r in runs:
            prefix = f"{r['name']} " if r["name"] else ""
            ax.plot(r["nodes"], r["jobs_per_h"], marker="o", color="#1f77b4", linestyle=r.get("style", "-"),
                    label=prefix + "jobs/h")
            ax2.plot(r["nodes"], r["efficiency"], marker="s", color="#2ca02c", linestyle=r.get("style", "-"),
                     label=prefix + "efficiency")
        ax2.set_ylim(0, max(1.0, max((e or 0) for r in runs for e in r["efficiency"])) * 1.35)
        ax.set_ylim(0, max([*ideal, *(v for r in runs for v in r["jobs_per_h"])], default=1) * 1.3)   # room for legends
        ax2.set_ylabel("efficiency", fontsize=8)
        ax.legend(fontsize=8, loc="upper left")
        ax2.legend(fontsize=8, loc="lower right")
    else:
        raise ValueError(f"unknown chart kind {chart.kind!r}")
    ax.set_title(chart.title, fontsize=10)
    ax.set_xlabel(d.get("x_label", "nodes" if chart.kind == "scaling" else "s from the workload's start"),
                  fontsize=8)
    ax.set_ylabel(d.get("y_label", "jobs/h" if chart.kind == "scaling" else ""), fontsize=8)
    ax.tick_params(labelsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def render(chart: Chart, fmt: str) -> bytes:
    """The chart as 'svg' or 'png' bytes."""
    return render_all(chart, [fmt])[fmt]


def render_all(chart: Chart, fmts: list[str]) -> dict[str, bytes]:
    """The chart in each format, drawn once (drawing is most of a report's time)."""
    import matplotlib.pyplot as plt

    fig = _figure(chart)
    out = {}
    for fmt in fmts:
        buf = io.BytesIO()
        # SVG: fixed hash salt and no date, so the same data gives the same file
        fig.savefig(buf, format=fmt, dpi=100, metadata={"Date": None} if fmt == "svg" else None)
        out[fmt] = buf.getvalue()
    plt.close(fig)
    return out
