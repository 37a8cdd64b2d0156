"""Markdown tables for benchmarks/RESULTS.md from the benchmarks' JSON rows (no hand copying).

python benchmarks/render_results.py benchmarks/out/bench_vs_devinterp.json
python benchmarks/render_results.py benchmarks/out/bench_numeric_scaling.json
python benchmarks/render_results.py benchmarks/out/bench_gpu_llc.json
python benchmarks/render_results.py benchmarks/out/bench_compile_time.json
"""

from __future__ import annotations

import json
import sys


def _x(v: float) -> str:
    return f"{v:.0f}×" if v >= 10 else f"{v:.1f}×"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Markdown table lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def devinterp_tables(rows: list[dict]) -> str:
    timing = _table(
        [
            "model",
            "chains",
            "burn-in + draws",
            "devinterp (s)",
            "numeric eager (s)",
            "ratio",
            "numeric compiled, cached (s)",
            "ratio",
            "first compiled call (s)",
        ],
        [
            [
                r["model"],
                str(r["chains"]),
                f"{r['burnin']} + {r['draws']}",
                f"{r['devinterp_s']:.1f}",
                f"{r['numeric_s']:.2f}",
                f"**{_x(r['ratio'])}**",
                f"{r['compiled_s']:.3f}",
                f"**{_x(r['ratio_compiled'])}**",
                f"{r['compiled_s'] + r['compile_s']:.1f}",
            ]
            for r in rows
        ],
    )
    per_step = _table(
        [
            "model",
            "chains",
            "devinterp",
            "bare eager loop (floor)",
            "numeric eager",
            "numeric compiled",
        ],
        [
            [r["model"], str(r["chains"])]
            + [f"{r[k]:,.0f}" for k in ("devinterp_step_us", "bare_us", "eager_us", "compiled_us")]
            for r in rows
        ],
    )
    estimates = _table(
        ["model", "chains", "exact λ (m)", "numeric eager", "numeric compiled", "devinterp"],
        [
            [
                r["model"],
                str(r["chains"]),
                "—" if r["exact"] is None else f"{r['exact']:.4g} ({r['m']})",
            ]
            + [
                f"{r[k + '_llc']:.4g} ± {r[k + '_se']:.2g}"
                for k in ("numeric", "compiled", "devinterp")
            ]
            for r in rows
        ],
    )
    note = (
        "Per-step cost in the steady state (µs per step for all chains; fixed per-call costs "
        "cancelled by differencing two run lengths):"
    )
    return "\n".join([*timing, "", note, "", *per_step, "", *estimates])


def scaling_table(rows: list[dict]) -> str:
    header = [
        "device",
        "chains",
        "params D",
        "gradient",
        "ms / step",
        "call s",
        "extra MB",
        "state MB",
    ]
    return "\n".join(
        _table(
            header,
            [
                [
                    r.get("device", "cpu"),
                    str(r["chains"]),
                    f"{r['params']:,}",
                    r["gradient"],
                    f"{r['ms_per_step']:.3g}",
                    f"{r.get('call_s', float('nan')):.3g}",
                    f"{r['extra_mb']:.0f}",
                    f"{r['state_mb']:.3g}",
                ]
                for r in rows
            ],
        )
    )


def gpu_llc_tables(rows: dict[str, dict]) -> str:
    dln = _table(
        [
            "model",
            "params D",
            "chains × batch",
            "burn-in + draws",
            "ε",
            "wall s",
            "steps / s",
            "λ̂ ± stderr",
            "λ = h²/2",
            "ESS",
            "findings",
            "peak GiB",
        ],
        [
            [
                name,
                f"{r['params']:,}",
                f"{r['chains']} × {r['batch']}",
                f"{r['burnin']:,} + {r['draws']:,}",
                f"{r['step_size']:.3g}",
                f"{r['wall_s']:.1f}",
                f"{r['steps_per_s']:.1f}",
                f"{r['estimate']:,.0f} ± {r['stderr']:,.0f}",
                f"{r['exact']:,.0f}",
                f"{r['ess']:.0f}",
                ", ".join(r["findings"]) or "none",
                f"{r['peak_gib']:.1f}",
            ]
            for name, r in rows.items()
            if name.startswith("dln")
        ],
    )
    out = ["\n".join(dln)]
    for name, r in rows.items():
        if "eager" not in r:
            continue
        out.append(
            "\n".join(
                _table(
                    ["run", "wall s", "steps", "chain-steps / s", "λ̂ ± stderr", "λ_β", "findings"],
                    [
                        [
                            f"{name} {how}",
                            f"{r[how]['wall_s']:.2f}",
                            str(r[how]["steps"]),
                            f"{r[how]['chain_steps_per_s']:,.0f}",
                            f"{r[how]['estimate']:.4f} ± {r[how]['stderr']:.3f}",
                            f"{r['exact_finite_temperature']:.4f}",
                            ", ".join(r[how]["findings"]) or "none",
                        ]
                        for how in ("eager", "compiled_first", "compiled_cached")
                    ],
                )
            )
        )
    return "\n\n".join(out)


def compile_time_table(rows: list[dict]) -> str:
    return "\n".join(
        _table(
            [
                "model",
                "first call, cold cache (s)",
                "first call, warm cache (s)",
                "later calls (s)",
                "processes, cold / warm (s)",
            ],
            [
                [
                    r["model"],
                    f"{r['cold_first_s']:.1f}",
                    f"{r['warm_first_s']:.1f}",
                    f"{r['cached_s']:.3f}",
                    f"{r['cold_process_s']:.1f} / {r['warm_process_s']:.1f}",
                ]
                for r in rows
            ],
        )
    )


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as fh:
            doc = json.load(fh)
        rows = doc["rows"]
        if isinstance(rows, dict):
            print(f"{doc['device']}, torch {doc['torch']}\n")
            print(gpu_llc_tables(rows))
        else:
            if "devinterp_s" in rows[0]:
                print(devinterp_tables(rows))
            elif "cold_first_s" in rows[0]:
                print(compile_time_table(rows))
            else:
                print(scaling_table(rows))
        print()


if __name__ == "__main__":
    main()
