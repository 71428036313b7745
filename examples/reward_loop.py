#!/usr/bin/env python3
"""One reward step of a training loop: evaluate candidate kernels, turn them into rewards.

    python3 examples/reward_loop.py --url URL [--token T] --workload W [--size S]
                                    [--timeout SECONDS] FILE...

Every FILE is one candidate: the C source of a kernel for workload W. All of them go to
``ckbench serve`` as one batch (POST /v1/evaluations/batch, chunked at 1000), then the
script waits for every evaluation and prints one line per candidate, in the order given:

    FILE reward=R verdict=V speedup=S

The reward rule:

* the evaluation finished ("done") and the candidate is correct (verdict "ok", the
  result's ``correct`` true) -> reward = its speedup over the baseline (baseline median
  time / candidate median time; > 1 is faster than the baseline);
* any other verdict ("wrong_result", "compile_error", "crash", "timeout", ...), a
  failed evaluation (the harness could not run it: verdict "failed"), a cancelled one,
  one not finished within --timeout (cancelled, verdict "not_finished"), or a correct one
  without a speedup (not timed) -> reward = 0.0.

A correct result whose ``timing_disturbed`` is true (timed under load by other work) still
gets its speedup, as the rule says; add ``and not result.get("timing_disturbed")`` in
``reward_of`` to score those 0.0 instead.

``verdict`` is the result's ``status`` for a finished evaluation, else the evaluation's
state; ``speedup`` is ``-`` when there is none. The token comes from --token or the
environment variable CKBENCH_TOKEN. Exit status: 0 when every candidate got a line, 1 when
the server could not be used (the error goes to stderr), 2 for a bad command line or a
FILE that cannot be read.
"""

import argparse
import math
import os
import sys
import time

try:
    from ckbench_client import Client, CkbenchError
except ImportError:  # run from the repository without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
    from ckbench_client import Client, CkbenchError


def reward_of(ev):
    """-> (reward, verdict, speedup or None) of a finished evaluation object."""
    if ev.get("state") != "done":
        return 0.0, ev.get("state") or "unknown", None
    result = ev.get("result") or {}
    verdict = result.get("status") or "unknown"
    speedup = result.get("speedup")
    if not isinstance(speedup, (int, float)) or isinstance(speedup, bool) or not math.isfinite(speedup):
        speedup = None
    if verdict == "ok" and result.get("correct") is True and speedup is not None:
        return float(speedup), verdict, speedup
    return 0.0, verdict, speedup


def cancel(client, eid):
    """Cancels an evaluation that ran out of time (freeing the server's queue); -> the
    object to score: state "not_finished" when cancelled, the finished one when it
    finished in between (then the server answers 409)."""
    try:
        return dict(client.cancel(eid), state="not_finished")
    except CkbenchError as e:
        if e.status != 409:
            raise
        return client.get(eid)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8714")
    ap.add_argument("--token", default=None, help="bearer token (default: $CKBENCH_TOKEN)")
    ap.add_argument("--workload", required=True, help="workload id, e.g. 1p")
    ap.add_argument("--size", default=None, help="small, default, paper or host (default: the server's)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds to wait for the whole batch (default: no limit)")
    ap.add_argument("files", nargs="+", metavar="FILE", help="candidate C sources")
    args = ap.parse_args(argv)

    requests = []
    for path in args.files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                req = {"workload": args.workload, "source": f.read()}
        except OSError as e:
            ap.error("cannot read %s: %s" % (path, e.strerror or e))
        if args.size:
            req["size"] = args.size
        requests.append(req)

    client = Client(args.url, token=args.token)
    try:
        ids = client.submit_batch(requests)
        deadline = None if args.timeout is None else time.monotonic() + args.timeout
        for path, eid in zip(args.files, ids):
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                reward, verdict, speedup = reward_of(client.wait(eid, timeout=left))
            except TimeoutError:
                reward, verdict, speedup = reward_of(cancel(client, eid))
            print("%s reward=%s verdict=%s speedup=%s" % (
                path, round(reward, 4), verdict, "-" if speedup is None else round(speedup, 4)),
                flush=True)
    except CkbenchError as e:
        print("reward_loop: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
