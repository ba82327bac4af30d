"""Target 2: a full gradient in reverse mode (one backward) vs forward mode (n passes).

    .venv/bin/python -m bench.modes_bench [--rounds 3] [--plot docs/reverse_vs_forward.png]

f(x_1, ..., x_n) = sum_i tanh(x_i * x_{i+1})   (indices mod n; only +, *, tanh,
which both Value and Dual have). Its full gradient:

    reverse  build f on n Values (the forward evaluation that records the
             graph) and call backward() once: every ∂f/∂x_i at once
    forward  n evaluations of f on Duals, the i-th seeded with der = 1 on x_i
             (the unit vector e_i): one ∂f/∂x_i per pass

Both give the same gradient (checked). Reverse mode costs a constant number
of passes over the ~3n-node graph, forward mode n passes: linear vs
quadratic in n. Times are CPU seconds of this process, medians of interleaved
rounds, for n from 1 to 1000; the plot is written with matplotlib (Agg).
"""

import argparse
import gc
import importlib.util
import random
import time

from bench.common import KIT_ROOT, interleave, machine, median, save, say

SIZES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def load_reference():
    spec = importlib.util.spec_from_file_location("tiny_autograd_modes", KIT_ROOT / "reference" / "tiny_autograd.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def f(xs):
    n = len(xs)
    total = (xs[0] * xs[1 % n]).tanh()
    for i in range(1, n):
        total = total + (xs[i] * xs[(i + 1) % n]).tanh()
    return total


def reverse_gradient(ad, point):
    xs = [ad.Value(x) for x in point]
    f(xs).backward()
    return [x.grad for x in xs]


def forward_gradient(ad, point):
    gradient = []
    for i in range(len(point)):
        xs = [ad.Dual(x, 1.0 if j == i else 0.0) for j, x in enumerate(point)]
        gradient.append(f(xs).der)
    return gradient


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--plot", default=str(KIT_ROOT / "docs" / "reverse_vs_forward.png"))
    args = parser.parse_args(argv)
    ad = load_reference()
    modes = {"reverse": reverse_gradient, "forward": forward_gradient}
    record = {"machine": machine(), "rounds": args.rounds, "function": "sum_i tanh(x_i * x_(i+1))", "sizes": {}}
    rng = random.Random(7)
    for n in map(int, args.sizes.split(",")):
        point = [rng.uniform(-1.5, 1.5) for _ in range(n)]
        reverse, forward = reverse_gradient(ad, point), forward_gradient(ad, point)
        worst = max(abs(a - b) for a, b in zip(reverse, forward))
        assert worst <= 1e-9, f"n={n}: the modes disagree by {worst}"
        # Time short runs over several calls: about n calls' work per sample.
        repeats = {"reverse": max(1, 20000 // n), "forward": max(1, 2000 // (n * n))}

        def timed(mode):
            spent = 0.0
            for _ in range(repeats[mode]):
                gc.collect()  # the previous call's graph is cyclic garbage: not on this call's bill
                started = time.process_time()
                modes[mode](ad, point)
                spent += time.process_time() - started
            return spent / repeats[mode]

        samples = interleave(modes, args.rounds, timed)
        figures = {mode: median(values) for mode, values in samples.items()}
        figures["ratio"] = figures["forward"] / figures["reverse"]
        figures["max_difference"] = worst
        record["sizes"][n] = figures
        say(f"n={n:5}: reverse {figures['reverse'] * 1e3:9.3f} ms, forward {figures['forward'] * 1e3:10.3f} ms,"
            f" forward/reverse {figures['ratio']:8.1f}")
    if args.plot:
        plot(record, args.plot)
        say(f"plot: {args.plot}")
    path = save("modes" if args.sizes == ",".join(map(str, SIZES)) else "modes-custom", record)
    say(f"figures: {path.relative_to(KIT_ROOT)}")
    return record


def plot(record, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(record["sizes"])
    reverse = [record["sizes"][n]["reverse"] * 1e3 for n in sizes]
    forward = [record["sizes"][n]["forward"] * 1e3 for n in sizes]
    figure, axes = plt.subplots(figsize=(7.0, 4.6), dpi=120)
    axes.loglog(sizes, forward, "o-", color="#c0392b", label="forward mode: n passes with Dual")
    axes.loglog(sizes, reverse, "s-", color="#2471a3", label="reverse mode: one backward() (graph included)")
    # Guides through the last point: slope 1 and slope 2.
    last = sizes[-1]
    guide = [reverse[-1] * n / last for n in sizes]
    axes.loglog(sizes, guide, ":", color="#2471a3", alpha=0.5, label="∝ n")
    guide = [forward[-1] * (n / last) ** 2 for n in sizes]
    axes.loglog(sizes, guide, ":", color="#c0392b", alpha=0.5, label="∝ n²")
    axes.set_xlabel("n inputs (full gradient of f(x₁, …, xₙ) = Σ tanh(xᵢ·xᵢ₊₁))")
    axes.set_ylabel("CPU time (ms)")
    ratio = record["sizes"][last]["ratio"]
    axes.set_title(f"Full gradient: reverse vs forward mode (n = {last}: forward takes {ratio:.0f}× longer)",
                   fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)


if __name__ == "__main__":
    main()
