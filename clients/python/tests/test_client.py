"""Tests of ckbench_client against a fake ckbench serve (stdlib only).

Run from the repository root, without installing:

    python3 -m unittest discover -s clients/python/tests -v

The fake server (``FakeServer``) implements just enough of API v1 to test the client:
evaluations that finish after a delay the source asks for (``DELAY=0.3``), with a
verdict it asks for (``WRONG``, ``FAIL``, ``SLOW`` = never finishes, ``SPEEDUP=2.5``, also
on a wrong result);
client_key idempotency; long-polls held at most ``hold_cap`` seconds (shorter than asked,
so the client's loop is exercised); and faults injected per request: an error status
before or after the request took effect, or a connection dropped after it did.
"""

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock
from urllib.parse import parse_qs, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # clients/python: the package, uninstalled
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

from ckbench_client import Client, CkbenchError  # noqa: E402

KEY_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
WORKLOADS = {"1p": "Flash Attention", "2p": "GQA Attention"}
SIZES = {"small", "default", "paper", "host"}
FINISHED = {"done", "failed", "cancelled"}


def api_error(code, message):
    return {"error": {"code": code, "message": message}}


class FakeServer:
    """A fake ``ckbench serve`` on 127.0.0.1, port 0, in a thread of its own."""

    def __init__(self, token=None, hold_cap=0.2):
        self.token = token
        self.hold_cap = hold_cap
        self.lock = threading.Lock()
        self.evals = {}       # id -> record
        self.order = []       # ids in creation order
        self.keys = {}        # client_key -> (request without client_key, id)
        self.log = []         # every request: dict(method, path, query, headers, body)
        self.batch_sizes = []  # len(evaluations) of every batch POST that took effect
        self.faults = []      # [method, path_prefix, action, remaining]
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.handle(self)

            do_POST = do_DELETE = do_GET

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    # ---- test helpers ----

    def fault(self, method, path, action, times=1):
        """Answers the next ``times`` requests to ``method path*`` with ``action``:
        ("status", code, retry_after or None[, raw body]) before the request takes
        effect, ("status_after", code) after it did, or ("drop_after",): the request
        takes effect and the connection closes with no answer."""
        self.faults.append([method, path, action, times])

    def requests(self, method, path):
        return [r for r in self.log if r["method"] == method and r["path"] == path]

    # ---- the server ----

    def handle(self, h):
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body = None
        if raw:
            try:
                body = json.loads(raw.decode("utf-8"))
            except ValueError:
                return self.send(h, 400, api_error("bad_json", "the body is not JSON"))
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self.lock:
            self.log.append({"method": h.command, "path": parts.path, "query": query,
                             "headers": dict(h.headers), "body": body})
            action = None
            for f in self.faults:
                if f[0] == h.command and parts.path.startswith(f[1]) and f[3] > 0:
                    f[3] -= 1
                    action = f[2]
                    break
        if action and action[0] == "status":
            headers = {"Retry-After": action[2]} if action[2] is not None else {}
            if len(action) > 3:
                return self.send(h, action[1], action[3], headers, ctype="text/html")
            return self.send(h, action[1], api_error("unavailable", "try later"), headers)
        if self.token and h.headers.get("Authorization") != "Bearer " + self.token:
            return self.send(h, 401, api_error("unauthorized", "a bearer token is needed"))
        status, answer, ctype = self.route(h.command, parts.path, query, body)
        if action and action[0] == "drop_after":
            h.close_connection = True
            return
        if action and action[0] == "status_after":
            return self.send(h, action[1], api_error("gateway_timeout", "the backend was slow"))
        self.send(h, status, answer, ctype=ctype or "application/json")

    def send(self, h, status, answer, headers=None, ctype="application/json"):
        if isinstance(answer, str):
            data = answer.encode("utf-8")
            if ctype == "application/json":
                ctype = "text/plain"
        else:
            data = json.dumps(answer).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", ctype + "; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def route(self, method, path, query, body):
        m = re.fullmatch(r"/v1/evaluations/(ev_[0-9a-f]+)", path)
        if method == "POST" and path == "/v1/evaluations":
            err = self.invalid(body, "")
            if err:
                return 400, api_error("invalid_request", err), None
            with self.lock:
                return self.create(body) + (None,)
        if method == "POST" and path == "/v1/evaluations/batch":
            items = (body or {}).get("evaluations")
            if not isinstance(items, list) or not 1 <= len(items) <= 1000:
                return 400, api_error("invalid_request", "evaluations: 1..1000 items"), None
            for i, item in enumerate(items):
                err = self.invalid(item, "evaluations[%d]." % i)
                if err:
                    return 400, api_error("invalid_request", err), None
            with self.lock:
                self.batch_sizes.append(len(items))
                return 202, {"evaluations": [self.create(item)[1] for item in items]}, None
        if method == "GET" and path.startswith("/v1/evaluations/"):
            if not m or m.group(1) not in self.evals:
                return 404, api_error("not_found", "no evaluation %s" % path.rsplit("/", 1)[1]), None
            end = time.monotonic() + min(float(query.get("wait", 0)), self.hold_cap)
            while True:
                with self.lock:
                    ev = self.view(m.group(1))
                if ev["state"] in FINISHED or time.monotonic() >= end:
                    return 200, ev, None
                time.sleep(0.01)
        if method == "DELETE" and m:
            with self.lock:
                if m.group(1) not in self.evals:
                    return 404, api_error("not_found", "no such evaluation"), None
                ev = self.view(m.group(1))
                if ev["state"] in FINISHED:
                    return 409, api_error("already_finished", "it is %s" % ev["state"]), None
                self.evals[m.group(1)]["cancelled"] = True
                return 200, self.view(m.group(1)), None
        if method == "GET" and path == "/v1/workloads":
            return 200, {"workloads": [{"id": k, "name": v} for k, v in WORKLOADS.items()]}, None
        m = re.fullmatch(r"/v1/workloads/([^/]+)(/prompt)?", path)
        if method == "GET" and m:
            if m.group(1) not in WORKLOADS:
                return 404, api_error("unknown_workload", "no workload %s" % m.group(1)), None
            if m.group(2):
                return 200, "PROMPT %s method=%s docs=%s size=%s \u00b5s" % (
                    m.group(1), query.get("method"), query.get("docs"), query.get("size")), "text/plain"
            return 200, {"id": m.group(1), "name": WORKLOADS[m.group(1)]}, None
        if method == "POST" and path == "/v1/feedback":
            if isinstance(body, dict) and isinstance(body.get("id"), str):
                with self.lock:
                    if body["id"] not in self.evals:
                        return 404, api_error("not_found", "no such evaluation"), None
                    ev = self.view(body["id"])
                return 200, "FEEDBACK id %s: %s" % (ev["id"], ev.get("result", {}).get("status")), "text/plain"
            if isinstance(body, dict) and isinstance(body.get("evaluation"), dict):
                return 200, "FEEDBACK result: %s" % body["evaluation"].get("status"), "text/plain"
            return 400, api_error("invalid_request", "id or evaluation is needed"), None
        if method == "GET" and path == "/healthz":
            return 200, {"status": "ok", "version": "fake"}, None
        return 404, api_error("not_found", "no route %s %s" % (method, path)), None

    def invalid(self, req, where):
        if not isinstance(req, dict):
            return where + ": not an object"
        if req.get("workload") not in WORKLOADS:
            return where + "workload: unknown workload %r" % (req.get("workload"),)
        if not isinstance(req.get("source"), str) or not req["source"]:
            return where + "source: a non-empty string is needed"
        if "size" in req and req["size"] not in SIZES:
            return where + "size: one of small, default, paper, host"
        if "client_key" in req and not (isinstance(req["client_key"], str) and KEY_RE.match(req["client_key"])):
            return where + "client_key: 1..128 of [A-Za-z0-9._:-]"
        return None

    def create(self, req):
        """-> (status, evaluation object); under the lock."""
        key = req.get("client_key")
        plain = {k: v for k, v in req.items() if k != "client_key"}
        if key is not None and key in self.keys:
            was, eid = self.keys[key]
            if was != plain:
                return 409, api_error("client_key_conflict", "client_key %s was used for another request" % key)
            return 200, self.view(eid)
        eid = "ev_%08x" % (len(self.order) + 1)
        src = req["source"]
        delay = re.search(r"DELAY=([0-9.]+)", src)
        self.evals[eid] = {"id": eid, "request": req, "created": time.monotonic(),
                           "delay": float(delay.group(1)) if delay else 0.0, "cancelled": False}
        self.order.append(eid)
        if key is not None:
            self.keys[key] = (plain, eid)
        return 202, self.view(eid)

    def view(self, eid):
        """The evaluation object as it stands now; under the lock."""
        rec = self.evals[eid]
        req, src = rec["request"], rec["request"]["source"]
        ev = {"id": eid, "workload": req["workload"], "size": req.get("size", "default"),
              "threads": req.get("threads", 4), "seeds": req.get("seeds", 3),
              "warmup": req.get("warmup", 10), "iters": req.get("iters", 50),
              "client_key": req.get("client_key"), "submitted_at": "2025-01-01T00:00:00Z",
              "started_at": None, "finished_at": None, "queue_s": None, "run_s": None, "attempts": 1}
        finished = "SLOW" not in src and time.monotonic() - rec["created"] >= rec["delay"]
        if rec["cancelled"]:
            ev["state"] = "cancelled"
        elif not finished:
            ev["state"] = "running"
        elif "FAIL" in src:
            ev["state"] = "failed"
            ev["error"] = {"code": "harness_error", "message": "the harness could not run"}
        else:
            ev["state"] = "done"
            sp = re.search(r"SPEEDUP=([0-9.]+)", src)
            if "WRONG" in src:
                ev["result"] = {"status": "wrong_result", "correct": False,
                                "speedup": float(sp.group(1)) if sp else None}
            else:
                ev["result"] = {"status": "ok", "correct": True,
                                "speedup": float(sp.group(1)) if sp else 1.0}
        return ev


class ClientTest(unittest.TestCase):
    token = None

    def setUp(self):
        self.server = FakeServer(token=self.token)
        self.addCleanup(self.server.close)
        # Tiny back-off so retries cost milliseconds.
        self.client = Client(self.server.url, token=self.token, timeout=5, retries=3,
                             backoff=0.01, backoff_max=0.05)

    # ---- submit, get ----

    def test_submit_and_get(self):
        eid = self.client.submit("1p", "void workload(void) {} /* \u00b5 */", size="small")
        self.assertRegex(eid, r"^ev_[0-9a-f]+$")
        (post,) = self.server.requests("POST", "/v1/evaluations")
        self.assertEqual(post["headers"]["Content-Type"], "application/json")
        self.assertEqual(post["body"]["workload"], "1p")
        self.assertEqual(post["body"]["source"], "void workload(void) {} /* \u00b5 */")
        self.assertEqual(post["body"]["size"], "small")
        self.assertRegex(post["body"]["client_key"], KEY_RE)
        self.assertNotIn("threads", post["body"])  # unset options are left to the server
        ev = self.client.get(eid)
        self.assertEqual(ev["id"], eid)
        self.assertEqual(ev["state"], "done")
        self.assertEqual(ev["result"]["status"], "ok")
        self.assertNotIn("wait", self.server.requests("GET", "/v1/evaluations/" + eid)[0]["query"])

    def test_client_key_reuse_same_request_and_conflict(self):
        a = self.client.submit("1p", "A", client_key="job-1:sample.7")
        self.assertEqual(self.client.submit("1p", "A", client_key="job-1:sample.7"), a)
        with self.assertRaises(CkbenchError) as cm:
            self.client.submit("1p", "B", client_key="job-1:sample.7")
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "client_key_conflict"))
        self.assertEqual(len(self.server.order), 1)

    # ---- errors ----

    def test_4xx_raises_ckbench_error_and_is_not_retried(self):
        with self.assertRaises(CkbenchError) as cm:
            self.client.submit("nope", "int x;")
        e = cm.exception
        self.assertEqual(e.status, 400)
        self.assertEqual(e.code, "invalid_request")
        self.assertIn("unknown workload", e.message)
        self.assertIn("400", str(e))
        self.assertIn("invalid_request", str(e))
        self.assertIn("unknown workload", str(e))
        self.assertEqual(len(self.server.requests("POST", "/v1/evaluations")), 1)
        with self.assertRaises(CkbenchError) as cm:
            self.client.get("ev_ffff")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        self.assertEqual(len(self.server.requests("GET", "/v1/evaluations/ev_ffff")), 1)

    def test_error_without_json_body(self):
        self.server.fault("GET", "/healthz", ("status", 502, None, "<html>Bad Gateway</html>"), times=10)
        with self.assertRaises(CkbenchError) as cm:
            self.client.health()
        self.assertEqual((cm.exception.status, cm.exception.code), (502, "http_502"))
        self.assertIn("Bad Gateway", cm.exception.message)
        self.assertEqual(len(self.server.requests("GET", "/healthz")), 4)  # 1 + retries=3

    # ---- retries ----

    def test_retry_on_429_honours_retry_after(self):
        self.server.fault("POST", "/v1/evaluations", ("status", 429, "0.3"), times=2)
        t0 = time.monotonic()
        eid = self.client.submit("1p", "int x;")
        elapsed = time.monotonic() - t0
        self.assertGreaterEqual(elapsed, 0.55, "Retry-After: 0.3 twice was not waited for")
        self.assertEqual(len(self.server.requests("POST", "/v1/evaluations")), 3)
        self.assertEqual(self.server.order, [eid])

    def test_429_gives_up_after_retries(self):
        self.server.fault("POST", "/v1/evaluations", ("status", 429, "0"), times=10)
        with self.assertRaises(CkbenchError) as cm:
            self.client.submit("1p", "int x;")
        self.assertEqual((cm.exception.status, cm.exception.code), (429, "unavailable"))
        self.assertEqual(cm.exception.retry_after, 0.0)
        self.assertEqual(len(self.server.requests("POST", "/v1/evaluations")), 4)  # 1 + retries=3
        self.assertEqual(self.server.order, [])

    def test_retry_on_503_sends_the_same_client_key(self):
        self.server.fault("POST", "/v1/evaluations", ("status", 503, None))
        eid = self.client.submit("1p", "int x;")
        posts = self.server.requests("POST", "/v1/evaluations")
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0]["body"], posts[1]["body"])
        self.assertEqual(self.server.order, [eid])

    def test_retry_on_504_after_the_request_took_effect_creates_one_evaluation(self):
        self.server.fault("POST", "/v1/evaluations", ("status_after", 504))
        eid = self.client.submit("1p", "int x;")
        self.assertEqual(len(self.server.requests("POST", "/v1/evaluations")), 2)
        self.assertEqual(self.server.order, [eid], "the retry created a second evaluation")

    def test_retry_on_dropped_connection_creates_one_evaluation(self):
        self.server.fault("POST", "/v1/evaluations", ("drop_after",))
        eid = self.client.submit("1p", "int x;")
        posts = self.server.requests("POST", "/v1/evaluations")
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0]["body"]["client_key"], posts[1]["body"]["client_key"])
        self.assertEqual(self.server.order, [eid], "the retry created a second evaluation")

    def test_batch_retry_on_dropped_connection_creates_each_once(self):
        self.server.fault("POST", "/v1/evaluations/batch", ("drop_after",))
        ids = self.client.submit_batch([{"workload": "1p", "source": "k%d" % i} for i in range(5)])
        self.assertEqual(len(self.server.requests("POST", "/v1/evaluations/batch")), 2)
        self.assertEqual(self.server.order, ids, "the retry created second evaluations")

    def test_get_retried_on_dropped_connection(self):
        eid = self.client.submit("1p", "int x;")
        self.server.fault("GET", "/v1/evaluations/", ("drop_after",))
        self.assertEqual(self.client.get(eid)["id"], eid)
        self.assertEqual(len(self.server.requests("GET", "/v1/evaluations/" + eid)), 2)

    def test_connection_refused_gives_connection_error(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        c = Client("http://127.0.0.1:%d" % port, retries=2, backoff=0.01)
        with self.assertRaises(CkbenchError) as cm:
            c.health()
        self.assertIsNone(cm.exception.status)
        self.assertEqual(cm.exception.code, "connection_error")
        self.assertIn("3 tries", cm.exception.message)

    # ---- batches ----

    def test_batch_chunks_at_1000(self):
        reqs = [{"workload": "1p", "source": "k%d" % i} for i in range(2345)]
        reqs[7]["client_key"] = "mine-7"
        before = json.dumps(reqs)
        ids = self.client.submit_batch(reqs)
        self.assertEqual(self.server.batch_sizes, [1000, 1000, 345])
        self.assertEqual(ids, self.server.order)
        self.assertEqual(json.dumps(reqs), before, "the caller's dicts were changed")
        sent = [item for r in self.server.requests("POST", "/v1/evaluations/batch")
                for item in r["body"]["evaluations"]]
        self.assertEqual([s["source"] for s in sent], ["k%d" % i for i in range(2345)])
        keys = [s["client_key"] for s in sent]
        self.assertEqual(keys[7], "mine-7")
        self.assertEqual(len(set(keys)), 2345)
        self.assertEqual(self.client.submit_batch([]), [])

    def test_batch_error_names_item_and_keeps_submitted(self):
        reqs = [{"workload": "1p", "source": "k%d" % i} for i in range(1500)]
        reqs[1200]["workload"] = "nope"
        with self.assertRaises(CkbenchError) as cm:
            self.client.submit_batch(reqs)
        e = cm.exception
        self.assertEqual(e.status, 400)
        self.assertIn("evaluations[200]", e.message)  # 200 inside the second chunk
        self.assertEqual(e.submitted, self.server.order)
        self.assertEqual(len(e.submitted), 1000)

    # ---- waiting ----

    def test_wait_long_polls_until_finished(self):
        eid = self.client.submit("1p", "DELAY=0.45")
        t0 = time.monotonic()
        ev = self.client.wait(eid)
        self.assertLess(time.monotonic() - t0, 3)
        self.assertEqual(ev["state"], "done")
        gets = self.server.requests("GET", "/v1/evaluations/" + eid)
        self.assertGreaterEqual(len(gets), 2, "the client did not poll again")
        self.assertEqual({g["query"].get("wait") for g in gets}, {"60"})

    def test_wait_timeout_raises_timeout_error(self):
        eid = self.client.submit("1p", "SLOW")
        t0 = time.monotonic()
        with self.assertRaises(TimeoutError):
            self.client.wait(eid, timeout=0.5)
        elapsed = time.monotonic() - t0
        self.assertGreaterEqual(elapsed, 0.45)
        self.assertLess(elapsed, 1.5)
        waits = [float(g["query"].get("wait", 0)) for g in self.server.requests("GET", "/v1/evaluations/" + eid)]
        self.assertTrue(waits and max(waits) <= 0.5, "wait= was not min(60, time left): %r" % waits)
        with self.assertRaises(TimeoutError):
            self.client.wait(eid, timeout=0)

    def test_wait_list_keeps_order_and_evaluate(self):
        ids = [self.client.submit("1p", "DELAY=0.3 SPEEDUP=2"),
               self.client.submit("1p", "WRONG"),
               self.client.submit("2p", "FAIL")]
        evs = self.client.wait(ids, timeout=5)
        self.assertEqual([e["id"] for e in evs], ids)
        self.assertEqual([e["state"] for e in evs], ["done", "done", "failed"])
        self.assertEqual(evs[0]["result"]["speedup"], 2.0)
        self.assertEqual(self.client.wait(evs[1])["id"], ids[1])  # an object in, an object out
        ev = self.client.evaluate("1p", "SPEEDUP=3.5", size="small")
        self.assertEqual((ev["state"], ev["size"], ev["result"]["speedup"]), ("done", "small", 3.5))

    # ---- cancel, workloads, prompt, feedback ----

    def test_cancel(self):
        eid = self.client.submit("1p", "SLOW")
        ev = self.client.cancel(eid)
        self.assertEqual((ev["id"], ev["state"]), (eid, "cancelled"))
        self.assertEqual(len(self.server.requests("DELETE", "/v1/evaluations/" + eid)), 1)
        self.assertEqual(self.client.cancel(ev)["state"], "cancelled")  # again: no error
        done = self.client.submit("1p", "int x;")
        with self.assertRaises(CkbenchError) as cm:
            self.client.cancel(done)
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "already_finished"))

    def test_prompt_and_feedback_return_text(self):
        text = self.client.prompt("1p", method="refine-docs", docs=True, size="small")
        self.assertEqual(text, "PROMPT 1p method=refine-docs docs=1 size=small \u00b5s")
        self.assertEqual(self.client.prompt("2p"), "PROMPT 2p method=None docs=None size=None \u00b5s")
        self.assertIn("docs=0", self.client.prompt("1p", docs=False))
        ev = self.client.evaluate("1p", "WRONG")
        self.assertEqual(self.client.feedback(ev["id"]), "FEEDBACK id %s: wrong_result" % ev["id"])
        self.assertEqual(self.client.feedback(ev), "FEEDBACK id %s: wrong_result" % ev["id"])
        self.assertEqual(self.client.feedback(ev["result"]), "FEEDBACK result: wrong_result")
        bodies = [r["body"] for r in self.server.requests("POST", "/v1/feedback")]
        self.assertEqual(bodies, [{"id": ev["id"]}, {"id": ev["id"]}, {"evaluation": ev["result"]}])

    def test_workloads_and_health(self):
        self.assertEqual([w["id"] for w in self.client.workloads()], ["1p", "2p"])
        self.assertEqual(self.client.workload("2p")["name"], "GQA Attention")
        self.assertEqual(self.client.health()["status"], "ok")
        if not self.token:
            self.assertNotIn("Authorization", self.server.log[-1]["headers"])

    # ---- the example ----

    def test_reward_loop_example(self):
        with tempfile.TemporaryDirectory() as d:
            files = []
            for name, src in [("a.c", "SPEEDUP=1.75 DELAY=0.2"), ("b.c", "WRONG"), ("c.c", "FAIL"),
                              ("d.c", "WRONG SPEEDUP=3"), ("e.c", "SLOW")]:
                files.append(os.path.join(d, name))
                with open(files[-1], "w") as f:
                    f.write(src)
            cmd = [sys.executable, os.path.join(REPO, "examples", "reward_loop.py"),
                   "--url", self.server.url, "--workload", "1p", "--size", "small", "--timeout", "0.8"]
            cmd += (["--token", self.token] if self.token else []) + files
            env = dict(os.environ)
            env.pop("CKBENCH_TOKEN", None)
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines(), [
            "%s reward=1.75 verdict=ok speedup=1.75" % files[0],
            "%s reward=0.0 verdict=wrong_result speedup=-" % files[1],
            "%s reward=0.0 verdict=failed speedup=-" % files[2],
            "%s reward=0.0 verdict=wrong_result speedup=3.0" % files[3],
            "%s reward=0.0 verdict=not_finished speedup=-" % files[4],
        ])
        (batch,) = self.server.requests("POST", "/v1/evaluations/batch")
        self.assertEqual([e["size"] for e in batch["body"]["evaluations"]], ["small"] * 5)
        self.assertEqual(len(self.server.requests("DELETE", "/v1/evaluations/" + self.server.order[4])), 1)


class TokenTest(ClientTest):
    """Every test above again against a server that needs a token, plus the token's own."""

    token = "s3cret-token"

    def test_bearer_token_sent(self):
        self.client.health()
        self.assertEqual(self.server.log[-1]["headers"]["Authorization"], "Bearer s3cret-token")
        with mock.patch.dict(os.environ, {"CKBENCH_TOKEN": ""}):
            with self.assertRaises(CkbenchError) as cm:
                Client(self.server.url).health()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
        with mock.patch.dict(os.environ, {"CKBENCH_TOKEN": "s3cret-token"}):
            self.assertEqual(Client(self.server.url).health()["status"], "ok")
        self.assertEqual(self.server.log[-1]["headers"]["Authorization"], "Bearer s3cret-token")


if __name__ == "__main__":
    unittest.main()
