"""Runs a pytest selection as K processes at once, each on a share of its cases, and adds up
their counts: device time on the GPU machine is the scarce thing, and most of a CUDA test file's
time is not the GPU's. The switch reruns (run_file_with_switches, helpers.py) each start a
pytest process of their own (torch import, CUDA context, collection: 10-15 s on the H100, 2026-12-05), and
test_permute's CUDA cases took 362 s in one process for 202 cases.

    python3 scripts/pytest_shards.py 4 --log-dir $OUT/shards -- tests -m cuda
    python3 scripts/pytest_shards.py 2 -- tests/test_permute.py -m "not cuda"

Everything after `--` selects the cases (it is collected once with --collect-only); each shard
then runs its node ids. Cases are dealt round robin in collection order, so each file's switch
reruns spread over the shards; tests/test_huge.py's multi-GB cases all go to shard 0, so that at
most one of them holds memory at a time. Prints each shard's summary line and the sums; exits 1
when a shard failed (or ran past --timeout seconds), 0 otherwise.

    python3 scripts/pytest_shards.py 5 --sanitizer-split $OUT/shards -- tests -m "cuda and not slow"

only deals the cases the way gpu_check.sh's compute-sanitizer shards want them
(deal_for_sanitizer) and writes them to DIR/cases.<name>, every case to DIR/all-cases; it runs
nothing.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

COUNT = re.compile(r"(\d+) (passed|failed|skipped|deselected|errors?|xfailed|xpassed)\b")


def collect(selection):
    done = subprocess.run([sys.executable, "-m", "pytest", *selection, "--collect-only", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True)
    if done.returncode not in (0, 5):  # 5: nothing selected
        sys.exit(f"collection failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return [line for line in done.stdout.splitlines() if "::" in line]


def deal(ids, shards):
    """Shard k gets every shards-th case; the huge-tensor cases all go to shard 0."""
    parts = [[] for _ in range(shards)]
    dealt = 0
    for node in ids:
        if node.startswith("tests/test_huge.py::"):
            parts[0].append(node)
        else:
            parts[dealt % shards].append(node)
            dealt += 1
    return [part for part in parts if part]


def deal_for_sanitizer(ids, shards):
    """gpu_check.sh's compute-sanitizer shards: {name: node ids}. The huge-tensor cases have shard
    "0" to themselves (at most one holds GPU memory per tool); cases with cuda_graph in their name
    go to "graphs" (run there with the caching allocator, which capture needs); test_concurrency's
    cases run last in shard "1" (racecheck of its threads hung when one came first in a shard,
    2026-11-30); the rest are dealt round robin over "1" to str(shards - 1), or all to "0" when
    shards is 1."""
    parts, last, dealt = {}, [], 0
    for node in ids:
        if "test_huge.py" in node:
            name = "0"
        elif "cuda_graph" in node:
            name = "graphs"
        elif "test_concurrency.py" in node:
            last.append(node)
            continue
        else:
            dealt += 1
            name = str(1 + dealt % (shards - 1)) if shards > 1 else "0"
        parts.setdefault(name, []).append(node)
    for node in last:
        parts.setdefault("1" if shards > 1 else "0", []).append(node)
    return parts


def write_sanitizer_split(ids, shards, folder):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "all-cases"), "w") as f:
        f.writelines(node + "\n" for node in ids)
    for name, part in deal_for_sanitizer(ids, shards).items():
        with open(os.path.join(folder, f"cases.{name}"), "w") as f:
            f.writelines(node + "\n" for node in part)


def summary_line(log_text):
    lines = [line for line in log_text.splitlines() if COUNT.search(line) and (" in " in line or "==" in line)]
    return lines[-1].strip("= ") if lines else "(no summary: the shard was stopped or crashed)"


def main():
    if "--" not in sys.argv:
        sys.exit("usage: pytest_shards.py K [--log-dir DIR] [--timeout S | --sanitizer-split DIR] -- <pytest selection>")
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("shards", type=int, help="processes at once (at least 1)")
    parser.add_argument("--log-dir", help="where each shard's log goes (default: a temporary folder)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds each shard may run")
    parser.add_argument("--sanitizer-split", metavar="DIR",
                        help="only write the compute-sanitizer shards' case lists to DIR (gpu_check.sh)")
    args = parser.parse_args(sys.argv[1:split])
    selection = sys.argv[split + 1:]
    if args.shards < 1:
        parser.error(f"shards: expected at least 1, got {args.shards}")
    if args.sanitizer_split:
        write_sanitizer_split(collect(selection), args.shards, args.sanitizer_split)
        return 0
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="pytest-shards-")
    os.makedirs(log_dir, exist_ok=True)

    start = time.monotonic()
    parts = deal(collect(selection), args.shards)
    print(f"{sum(map(len, parts))} cases in {len(parts)} shard(s), collected in {time.monotonic() - start:.0f} s; "
          f"logs in {log_dir}", flush=True)
    runs = []
    for k, part in enumerate(parts):
        log = open(os.path.join(log_dir, f"shard-{k}.log"), "w")
        command = [sys.executable, "-X", "faulthandler", "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", *part]
        # A session of its own: a shard stopped by --timeout takes its switch reruns with it.
        runs.append((k, log, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)))

    totals, failed = {}, False
    for k, log, process in runs:
        try:
            rc = process.wait(timeout=None if args.timeout is None else max(1.0, args.timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            rc = process.wait()
            print(f"shard {k}: stopped after --timeout {args.timeout:.0f} s")
        log.close()
        with open(log.name) as f:
            text = f.read()
        line = summary_line(text)
        print(f"shard {k}: exit {rc}: {line}")
        if rc != 0:
            failed = True
            for failure in [l for l in text.splitlines() if l.startswith(("FAILED", "ERROR"))][:10]:
                print(f"  {failure}")
        for number, word in COUNT.findall(line):
            word = "errors" if word.startswith("error") else word
            totals[word] = totals.get(word, 0) + int(number)
    counts = ", ".join(f"{n} {word}" for word, n in totals.items())
    print(f"all shards: {counts or 'no counts'} in {time.monotonic() - start:.0f} s{' (FAILED)' if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
