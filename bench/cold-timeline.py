#!/usr/bin/env python3
"""A cold CLI command's timeline: each line of its debug log stamped with the milliseconds since
the command was started, then the time its last line was written and the time the process ended.

    NEARSCAPE_LOG is set to debug for the command; its stdout is kept in --stdout (the JSON).
    bench/cold-timeline.py [--runs N] [--stdout FILE] -- nearscape-cli knn A.npy --queries Q.npy --json

Says where a command's wall time goes that its own timings (load_s, knn_s) do not cover: the
program's start before its first line, and its end after its last (threads joined, the device's
teardown). Runs are printed one after the other; a summary line gives the medians.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run_once(command, stdout_path):
    env = dict(os.environ, NEARSCAPE_LOG="debug")
    start = time.perf_counter()
    with open(stdout_path, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        lines = []
        for raw in proc.stderr:
            lines.append((1000 * (time.perf_counter() - start), raw.decode(errors="replace").rstrip()))
        proc.wait()
    end = 1000 * (time.perf_counter() - start)
    return lines, end, proc.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stdout", default="/tmp/cold-timeline.out")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    firsts, lasts, ends = [], [], []
    for r in range(args.runs):
        lines, end, rc = run_once(command, args.stdout)
        print(f"-- run {r + 1}: exit {rc}, {end:.1f} ms")
        for at, text in lines:
            print(f"{at:8.1f}  {text}")
        if lines:
            firsts.append(lines[0][0])
            lasts.append(lines[-1][0])
        ends.append(end)
        print(f"{end:8.1f}  (process ended: {end - lines[-1][0] if lines else end:.1f} ms after its last line)")
    if lasts:
        print(f"medians: first line {statistics.median(firsts):.1f} ms, last line "
              f"{statistics.median(lasts):.1f} ms, end {statistics.median(ends):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
