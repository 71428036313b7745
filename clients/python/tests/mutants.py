"""Breaks each mechanism the tests guard, once, and checks that the suite notices.

    python3 clients/python/tests/mutants.py        # from anywhere; about a minute (4 at a time)

For every mutation below (a one-place change to the client or the example) it copies
clients/python and examples to a temporary folder, applies the change, runs the whole
suite there and prints which tests failed. A mutation that no test notices is a hole in
the tests: the script then says so and exits 1. Not named test_*, so ``unittest
discover`` does not run it.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
C = "clients/python/ckbench_client/client.py"
E = "examples/reward_loop.py"
M = [
 ("fresh client_key on every retry", C,
  "            try:\n                status, reason, answer_headers, payload = self._send(",
  "            if attempt and isinstance(body, dict):\n"
  "                if 'client_key' in body: body = dict(body, client_key=str(uuid.uuid4()))\n"
  "                if 'evaluations' in body: body = {'evaluations': [dict(e, client_key=str(uuid.uuid4())) for e in body['evaluations']]}\n"
  "                data = json.dumps(body).encode()\n"
  "            try:\n                status, reason, answer_headers, payload = self._send("),
 ("no client_key made by submit", C,
  '    if request.get("client_key") is None:\n        request["client_key"] = str(uuid.uuid4())\n', ""),
 ("Retry-After ignored", C,
  "delay = err.retry_after if err.retry_after is not None else self._backoff(attempt)",
  "delay = self._backoff(attempt)"),
 ("503 not retried", C, "RETRY_STATUSES = frozenset({429, 502, 503, 504})", "RETRY_STATUSES = frozenset({429, 502, 504})"),
 ("429 not retried", C, "RETRY_STATUSES = frozenset({429, 502, 503, 504})", "RETRY_STATUSES = frozenset({502, 503, 504})"),
 ("connection errors not retried", C, "                if attempt >= self.retries:\n                    raise CkbenchError(None",
  "                if True:\n                    raise CkbenchError(None"),
 ("4xx retried too", C, "if status not in RETRY_STATUSES or attempt >= self.retries:", "if attempt >= self.retries:"),
 ("no retry limit on statuses (retries ignored)", C, "if status not in RETRY_STATUSES or attempt >= self.retries:", "if status not in RETRY_STATUSES or attempt >= 50:"),
 ("no chunking", C, "BATCH_LIMIT = 1000", "BATCH_LIMIT = 5000"),
 ("caller's client_key overwritten", C, 'if item.get("client_key") is None:', "if True:"),
 ("caller's dicts changed", C, "item = dict(r)", "item = r"),
 ("no .submitted on a failed chunk", C, "e.submitted = list(ids)", "pass"),
 ("token not sent", C, "        if self.token:\n            headers[\"Authorization\"]", "        if False:\n            headers[\"Authorization\"]"),
 ("CKBENCH_TOKEN ignored", C, '(os.environ.get("CKBENCH_TOKEN") or None)', "None"),
 ("error code not parsed", C, 'code = str(err.get("code") or code)', "pass"),
 ("wait returns after one poll", C, "            if ev.get(\"state\") in FINISHED_STATES:\n                return ev", "            return ev"),
 ("wait= always 60", C, "poll = MAX_POLL_S if deadline is None else max(0.0, min(MAX_POLL_S, deadline - start))", "poll = MAX_POLL_S"),
 ("no TimeoutError", C, "                raise TimeoutError(", "                return ev; raise TimeoutError("),
 ("wait list loses order", C, "for e in list(evaluations)]", "for e in sorted(evaluations, key=str, reverse=True)]"),
 ("cancel sends GET", C, 'return self._request("DELETE", "/v1/evaluations/" + eid)', 'return self._request("GET", "/v1/evaluations/" + eid)'),
 ("cancel 409 not checked", C, "            if e.status != 409:\n                raise", "            raise"),
 ("prompt drops docs", C, 'query["docs"] = "1" if docs else "0"', "pass"),
 ("feedback sends objects whole", C, 'elif isinstance(evaluation, dict) and "state" in evaluation and "id" in evaluation:', "elif False:"),
 ("text answers parsed as JSON", C, "    if text:\n        return payload.decode", "    if False:\n        return payload.decode"),
 ("example: reward ignores the verdict", E, 'if verdict == "ok" and result.get("correct") is True and speedup is not None:', "if speedup is not None:"),
 ("example: no cancel on timeout", E, 'return dict(client.cancel(eid), state="not_finished")', 'return {"state": "not_finished"}'),
 ("example: size not sent", E, '            req["size"] = args.size', "            pass"),
]


def run(i, mutation):
    """-> (line to print, whether some test failed) for one mutation."""
    name, path, old, new = mutation
    d = os.path.join(top, "m%02d" % i)
    for sub in ("clients/python", "examples"):
        shutil.copytree(os.path.join(SRC, sub), os.path.join(d, sub), ignore=shutil.ignore_patterns("__pycache__"))
    f = os.path.join(d, path)
    with open(f) as fh:
        s = fh.read()
    assert s.count(old) == 1, (name, s.count(old))
    with open(f, "w") as fh:
        fh.write(s.replace(old, new))
    p = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "clients/python/tests"],
                       cwd=d, capture_output=True, text=True, timeout=300)
    failed = sorted(set(re.findall(r"^(?:FAIL|ERROR): (\w+) \(test_client\.(\w+)", p.stderr, re.M)))
    ran = re.search(r"Ran (\d+) tests in ([\d.]+)s", p.stderr)
    names = sorted({t for t, cls in failed})
    return ("%-45s %s  [%d failures+errors of %s, %ss]" % (
        name, ", ".join(names) or "NOTHING FAILED", len(failed),
        ran.group(1) if ran else "?", ran.group(2) if ran else "?"), bool(failed))


top = tempfile.mkdtemp(prefix="ckbench-client-mutants-")
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    results = list(pool.map(run, range(len(M)), M))
for line, caught in results:
    print(line)
shutil.rmtree(top, ignore_errors=True)
ok = all(caught for line, caught in results)
print("every mutation caught (%d)" % len(M) if ok else "SOME MUTATION SURVIVED")
sys.exit(0 if ok else 1)
