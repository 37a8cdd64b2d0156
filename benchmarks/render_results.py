"""Markdown tables for benchmarks/RESULTS.md from the benchmarks' JSON rows (no hand copying).

python benchmarks/render_results.py benchmarks/out/bench_vs_devinterp.json
python benchmarks/render_results.py benchmarks/out/bench_numeric_scaling.json
"""

from __future__ import annotations

import json
import sys


def _x(v: float) -> str:
    return f"{v:.0f}×" if v >= 10 else f"{v:.1f}×"


def devinterp_tables(rows: list[dict]) -> str:
    out = [
        "| model | chains | burn-in + draws | devinterp (s) | numeric eager (s) | ratio | "
        "numeric compiled, cached (s) | ratio | first compiled call (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['model']} | {r['chains']} | {r['burnin']} + {r['draws']} | "
            f"{r['devinterp_s']:.1f} | {r['numeric_s']:.2f} | **{_x(r['ratio'])}** | "
            f"{r['compiled_s']:.3f} | **{_x(r['ratio_compiled'])}** | "
            f"{r['compiled_s'] + r['compile_s']:.1f} |"
        )
    out += [
        "",
        "Per-step cost in the steady state (µs per step for all chains; fixed per-call costs "
        "cancelled by differencing two run lengths):",
        "",
        "| model | chains | devinterp | bare eager loop (floor) | numeric eager | numeric compiled |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['model']} | {r['chains']} | {r['devinterp_step_us']:,.0f} | "
            f"{r['bare_us']:,.0f} | {r['eager_us']:,.0f} | {r['compiled_us']:,.0f} |"
        )
    out += [
        "",
        "| model | chains | exact λ (m) | numeric eager | numeric compiled | devinterp |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        exact = "—" if r["exact"] is None else f"{r['exact']:.4g} ({r['m']})"
        out.append(
            f"| {r['model']} | {r['chains']} | {exact} | "
            f"{r['numeric_llc']:.4g} ± {r['numeric_se']:.2g} | "
            f"{r['compiled_llc']:.4g} ± {r['compiled_se']:.2g} | "
            f"{r['devinterp_llc']:.4g} ± {r['devinterp_se']:.2g} |"
        )
    return "\n".join(out)


def scaling_table(rows: list[dict]) -> str:
    out = [
        "| device | chains | params D | gradient | ms / step | call s | extra MB | state MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r.get('device', 'cpu')} | {r['chains']} | {r['params']:,} | {r['gradient']} | "
            f"{r['ms_per_step']:.3g} | {r.get('call_s', float('nan')):.3g} | "
            f"{r['extra_mb']:.0f} | {r['state_mb']:.3g} |"
        )
    return "\n".join(out)


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as fh:
            doc = json.load(fh)
        rows = doc["rows"]
        print(devinterp_tables(rows) if "devinterp_s" in rows[0] else scaling_table(rows))
        print()


if __name__ == "__main__":
    main()
