"""Target 1: the reference engine against micrograd, same graphs, same process.

    .venv/bin/python -m bench.engine_bench [--rounds 5] [--quick]

Three graphs, each about a million nodes, built with operations both engines
have (+, *, **, relu) and then differentiated with backward():

    chain  a 1,000,000-op chain: y = ((y * a + b).relu()) ** 1.0, repeated
    tree   a balanced binary sum tree over 2**19 leaves
    mlp    an MLP-shaped graph: 16 inputs -> 64 relu -> 64 relu -> 1, a batch of
           samples sharing the weights, loss = sum of (out - target) ** 2

For each graph and engine: forward (building) and backward CPU seconds of the
benchmark thread (wall seconds are recorded too, but on a shared machine they
also count other jobs' time slices), nodes per second over both, and peak traced memory per node (tracemalloc, in a separate
untimed pass on the graph's --quick size, about a tenth: tracing a million
nodes takes minutes, and the bytes per node hardly depend on the size).

micrograd's backward() sorts the graph with a recursive function, one Python
frame per node of the longest path, so the chain needs a recursion limit above
a million; everything runs in a thread with a large stack so that neither the
recursion nor freeing a deep graph can overflow the C stack.
"""

import argparse
import gc
import importlib.util
import random
import sys
import threading
import time
import tracemalloc

from bench.common import KIT_ROOT, interleave, machine, median, save, say

REFERENCE = KIT_ROOT / "reference" / "tiny_autograd.py"


def load_engines():
    spec = importlib.util.spec_from_file_location("tiny_autograd_bench", REFERENCE)
    ours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours)
    from micrograd.engine import Value as MicrogradValue

    return {"reference": ours.Value, "micrograd": MicrogradValue}


# ------------------------------------------------------------------ graphs
# Each builder takes the engine's Value class and returns (leaves, root).


def chain(Value, ops=1_000_000):
    a, b, x = Value(0.5), Value(1.0), Value(0.3)
    y = x
    for _ in range(ops // 4):  # four ops per round: *, +, relu, **
        y = (y * a + b).relu() ** 1.0
    return [x, a, b], y


def tree(Value, depth=19):
    rng = random.Random(1)
    leaves = [Value(rng.uniform(-1.0, 1.0)) for _ in range(2**depth)]
    level = leaves
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    return leaves, level[0]


def mlp(Value, batch=96, sizes=(16, 64, 64, 1)):
    rng = random.Random(2)
    layers = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        scale = fan_in**-0.5
        layers.append([
            ([Value(rng.uniform(-scale, scale)) for _ in range(fan_in)], Value(0.0))
            for _ in range(fan_out)
        ])
    leaves = [p for layer in layers for ws, b in layer for p in (*ws, b)]
    loss = None
    for _ in range(batch):
        xs = [Value(rng.uniform(-1.0, 1.0)) for _ in range(sizes[0])]
        target = Value(rng.uniform(-1.0, 1.0))
        leaves += xs + [target]
        for number, layer in enumerate(layers):
            last = number == len(layers) - 1
            outputs = []
            for ws, b in layer:
                act = b
                for w, x in zip(ws, xs):
                    act = act + w * x
                outputs.append(act if last else act.relu())
            xs = outputs
        error = (xs[0] + target * -1.0) ** 2
        loss = error if loss is None else loss + error
    return leaves, loss


GRAPHS = {"chain": chain, "tree": tree, "mlp": mlp}
QUICK = {"chain": {"ops": 100_000}, "tree": {"depth": 16}, "mlp": {"batch": 10}}


def count_nodes(root, parents):
    """Nodes reachable from root (iteratively, by identity)."""
    seen, stack = {id(root)}, [root]
    while stack:
        for parent in parents(stack.pop()):
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return len(seen)


PARENTS = {"reference": lambda v: v._parents, "micrograd": lambda v: v._prev}

# ------------------------------------------------------------------ runs


def timed(Value, build, kwargs, collector=True):
    """CPU seconds of this thread (forward, backward) and wall seconds of both.

    CPU time is the figure compared: on a machine shared with other jobs the
    wall time also counts the time slices given to them. `collector=False`
    pauses Python's cyclic garbage collector while the graph is built and
    differentiated (as `timeit` does), which leaves each engine's own work."""
    gc.collect()
    if not collector:
        gc.disable()
    wall, cpu = time.perf_counter(), time.thread_time()
    leaves, root = build(Value, **kwargs)
    built = time.thread_time()
    root.backward()
    done, wall_done = time.thread_time(), time.perf_counter()
    gc.enable()
    del leaves, root
    return {"forward": built - cpu, "backward": done - built, "total": done - cpu, "wall": wall_done - wall}


def traced(Value, build, kwargs):
    gc.collect()
    tracemalloc.start()
    leaves, root = build(Value, **kwargs)
    after_forward = tracemalloc.get_traced_memory()[0]
    root.backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del leaves, root
    gc.collect()
    return {"after_forward": after_forward, "peak": peak}


def check_same_results(engines):
    """Both engines must compute the same gradients on small versions of each graph."""
    small = {"chain": {"ops": 400}, "tree": {"depth": 6}, "mlp": {"batch": 2, "sizes": (4, 5, 1)}}
    for name, build in GRAPHS.items():
        got = {}
        for engine, Value in engines.items():
            leaves, root = build(Value, **small[name])
            root.backward()
            got[engine] = [float(leaf.grad) for leaf in leaves]
        for a, b in zip(got["reference"], got["micrograd"]):
            assert abs(a - b) <= 1e-9 * max(1.0, abs(a)), (name, a, b)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small graphs (a smoke run)")
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--gc", choices=("on", "off", "both"), default="both",
                        help="time with the cyclic garbage collector on (the default interpreter), off, or both")
    args = parser.parse_args(argv)

    engines = load_engines()
    check_same_results(engines)
    record = {"machine": machine(), "rounds": args.rounds, "graphs": {}}
    for name in args.graphs.split(","):
        build, kwargs = GRAPHS[name], (QUICK[name] if args.quick else {})
        nodes = _nodes(engines["reference"], build, kwargs)
        leaves, root = build(engines["micrograd"], **kwargs)
        assert count_nodes(root, PARENTS["micrograd"]) == nodes, "the graphs differ"
        del leaves, root
        gc.collect()
        say(f"{name}: {nodes} nodes")
        # Bytes per node hardly depend on the size, and tracing a million-node
        # graph takes minutes: memory is traced on the small versions.
        memory = {engine: traced(engines[engine], build, QUICK[name]) for engine in engines}
        memory_nodes = _nodes(engines["reference"], build, QUICK[name])
        record["graphs"][name] = {"nodes": nodes}
        for mode in (("on", "off") if args.gc == "both" else (args.gc,)):
            say(f" garbage collector {mode}")
            record["graphs"][name]["gc_" + mode] = compare(engines, build, kwargs, args.rounds, nodes, memory,
                                                           memory_nodes, mode == "on")
    path = save("engine" + ("-quick" if args.quick else ""), record)
    say(f"figures: {path.relative_to(KIT_ROOT)}")
    return record


def _nodes(Value, build, kwargs):
    leaves, root = build(Value, **kwargs)
    return count_nodes(root, PARENTS["reference"])


def compare(engines, build, kwargs, rounds, nodes, memory, memory_nodes, collector):
    """Interleaved rounds of both engines on one graph; medians and ratios."""
    samples = interleave(
        engines, rounds, lambda engine: timed(engines[engine], build, kwargs, collector),
        on_sample=lambda n, engine, s: say(f"  round {n + 1} {engine:10} forward {s['forward']:.3f} s"
                                           f"  backward {s['backward']:.3f} s"),
    )
    figures = {}
    for engine in engines:
        total = median([s["total"] for s in samples[engine]])
        figures[engine] = {
            "forward_s": median([s["forward"] for s in samples[engine]]),
            "backward_s": median([s["backward"] for s in samples[engine]]),
            "total_s": total,
            "nodes_per_s": nodes / total,
            "peak_bytes_per_node": memory[engine]["peak"] / memory_nodes,
            "forward_bytes_per_node": memory[engine]["after_forward"] / memory_nodes,
            "wall_s": median([s["wall"] for s in samples[engine]]),
            "samples_total_s": [round(s["total"], 4) for s in samples[engine]],
        }
    ratios = [m["total"] / r["total"] for r, m in zip(samples["reference"], samples["micrograd"])]
    figures["speedup"] = figures["reference"]["nodes_per_s"] / figures["micrograd"]["nodes_per_s"]
    figures["speedup_per_round"] = [round(r, 3) for r in ratios]
    figures["backward_speedup"] = figures["micrograd"]["backward_s"] / figures["reference"]["backward_s"]
    figures["wall_speedup"] = figures["micrograd"]["wall_s"] / figures["reference"]["wall_s"]
    figures["forward_speedup"] = figures["micrograd"]["forward_s"] / figures["reference"]["forward_s"]
    say(f"  => reference {figures['reference']['nodes_per_s'] / 1e6:.2f} M nodes/s, "
        f"micrograd {figures['micrograd']['nodes_per_s'] / 1e6:.2f} M nodes/s, "
        f"speed-up {figures['speedup']:.2f}x (forward {figures['forward_speedup']:.2f}x, "
        f"backward {figures['backward_speedup']:.2f}x); peak bytes/node "
        f"{figures['reference']['peak_bytes_per_node']:.0f} vs {figures['micrograd']['peak_bytes_per_node']:.0f}")
    return figures


def run_with_big_stack(function):
    """micrograd's recursive topological sort needs one frame per node of the chain."""
    sys.setrecursionlimit(3_000_000)
    threading.stack_size(1 << 30)
    box = {}
    thread = threading.Thread(target=lambda: box.update(result=function()))
    thread.start()
    thread.join()
    if "result" not in box:
        raise SystemExit("the benchmark failed (see above)")
    return box["result"]


if __name__ == "__main__":
    run_with_big_stack(main)
