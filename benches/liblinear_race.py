"""sparselin's solvers against one liblinear solver over a ladder of -e, to 1e-2, 1e-4, 1e-6 of
J*: the alternated rounds, J* and how far the solvers' certificates bound it, and each one's
time to each target (the driver of l1_peers.py and newton_peers.py)."""
import statistics

from sublbfgs_real_sets import fmt, solver_cells

EPS_LADDER = ["0.1", "0.01", "0.001", "1e-4", "1e-5", "1e-6", "1e-7", "1e-8"]
TARGETS = [1e-2, 1e-4, 1e-6]


def race(rounds, algos, sparselin_trace, liblinear_run):
    """Runs `rounds` rounds, each every algo of algos at 1 and 2 threads
    (sparselin_trace(algo, threads) → [(seconds, J, gap)], a row per iteration) and then
    liblinear at each -e of EPS_LADDER (liblinear_run(eps, scored) → (CPU seconds, J), J
    computed from the model only when scored: in the first round, the same in every round).
    Returns
    (J*, certified, rows): J* is the lowest J seen, certified (J* − the highest J − gap any
    sparselin report gave)/J*, and rows a (target, cells, record) per target, cells the table's
    cells from the solvers' iterations on, record their numbers (None for a target J* is not
    certified to a tenth of)."""
    ll_cpu = {e: [] for e in EPS_LADDER}
    ll_j = {}
    traces = {(a, n): [] for a in algos for n in (1, 2)}
    for _ in range(rounds):
        for a in algos:
            for threads in (1, 2):
                traces[a, threads].append(sparselin_trace(a, threads))
        for e in EPS_LADDER:
            cpu, j = liblinear_run(e, e not in ll_j)
            ll_cpu[e].append(cpu)
            if e not in ll_j:
                ll_j[e] = j
    runs = [t for ts in traces.values() for t in ts]
    j_star = min(min(ll_j.values()), min(j for t in runs for _, j, _ in t))
    lower = max(j - g for t in runs for _, j, g in t)
    certified = max(0.0, (j_star - lower) / j_star)
    rows = []
    for target in TARGETS:
        if certified > 0.1 * target:
            cells = " J* not certified to a tenth of the target " + "|" * (1 + 3 * len(algos))
            rows.append((target, cells, None))
            continue
        reached = [e for e in EPS_LADDER if (ll_j[e] - j_star) / j_star <= target]
        e = reached[0] if reached else None
        tl = statistics.median(ll_cpu[e]) if e else None
        cells, ratios, per_solver = solver_cells(algos, traces, j_star, target, tl)
        record = dict(target=target, liblinear_eps=e, liblinear=tl, **per_solver)
        rows.append((target, f"{cells} {e or '—'} | {fmt(tl)} |{ratios}", record))
    return j_star, certified, rows


def header(first_columns, algos):
    """The table's two header lines: first_columns (a list of names), then each solver's
    iterations and times, liblinear's, and each solver's ratio to it."""
    names = (first_columns + ["target"]
             + [f"{a} {c}" for a in algos for c in ("it.", "ms, 1 / 2 threads")]
             + ["liblinear -e", "liblinear ms"] + [f"{a} ÷ ll" for a in algos])
    return "| " + " | ".join(names) + " |\n" + "|---" * len(names) + "|"
