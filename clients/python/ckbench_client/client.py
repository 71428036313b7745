"""The client for the ckbench serve HTTP/1.1 JSON API, version 1.

Standard library only. One ``Client`` holds the server's address, the token and the
retry settings; it keeps no connection or other state between calls, so one client may
be shared by threads.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import time
import uuid
from typing import Any, Dict, Iterable, List, Optional, Union
from urllib.parse import quote, urlencode, urlsplit

__all__ = ["Client", "CkbenchError", "FINISHED_STATES", "BATCH_LIMIT"]

#: The states an evaluation does not leave.
FINISHED_STATES = frozenset({"done", "failed", "cancelled"})

#: The most evaluations one POST /v1/evaluations/batch takes.
BATCH_LIMIT = 1000

#: The longest single long-poll (``wait=``) the client asks for, in seconds.
MAX_POLL_S = 60.0

#: The API's upper bound on ``wait=``, in seconds.
MAX_WAIT_S = 60.0

#: An unfinished answer to a long-poll that comes back sooner than this (a server or a
#: proxy that does not hold the request) is followed by a pause up to this many seconds
#: from the poll's start, so a waiting client never spins.
MIN_POLL_S = 0.5

#: Statuses a request is retried on (besides a connection that fails or drops).
RETRY_STATUSES = frozenset({429, 502, 503, 504})

#: The longest ``Retry-After`` honoured, in seconds; a larger one is cut to this.
MAX_RETRY_AFTER_S = 600.0

EvaluationRef = Union[str, Dict[str, Any]]


class CkbenchError(Exception):
    """An error answer from the server, or a request that failed after every retry.

    Attributes:
        status: the HTTP status (``400``, ``404``, ``409``, ``429``, ...), or ``None``
            when no answer came (the connection failed on every try) or the error is
            the client's own (``bad_response``).
        code: the API's snake_case error code (``"not_found"``, ...); when the body held
            none, ``"http_<status>"``; ``"connection_error"`` when no answer came;
            ``"bad_response"`` for a 2xx answer that is not what the API promises.
        message: the server's human-readable text (or the transport's error).
        retry_after: the answer's ``Retry-After`` in seconds, when it had one.
        submitted: for ``Client.submit_batch`` only: the ids of the evaluations that
            earlier chunks created before this error (they stay submitted); ``None``
            elsewhere. A 400 naming ``evaluations[i]`` counts ``i`` inside the failed
            chunk, so the item is ``requests[len(submitted) + i]``.
    """

    def __init__(self, status: Optional[int], code: str, message: str):
        super().__init__(status, code, message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after: Optional[float] = None
        self.submitted: Optional[List[str]] = None

    def __str__(self) -> str:
        if self.status is None:
            return "%s: %s" % (self.code, self.message)
        return "HTTP %d %s: %s" % (self.status, self.code, self.message)


class Client:
    """A client of one ``ckbench serve`` server.

    Args:
        url: the server's base URL, e.g. ``"http://127.0.0.1:8714"`` (``https`` works too;
            a path such as ``http://host/ckbench`` is kept as a prefix).
        token: the bearer token; ``None`` reads the environment variable
            ``CKBENCH_TOKEN`` (unset or empty: no ``Authorization`` header is sent).
        timeout: the socket timeout of one request, in seconds. A long-poll adds its
            ``wait`` to it.
        retries: how many times a request is tried again after a connection error or a
            429/502/503/504 answer (so at most ``retries + 1`` tries). Other errors are
            never retried.
        backoff: the first pause between tries when the answer gave no ``Retry-After``;
            it doubles with every retry (with jitter) up to ``backoff_max`` seconds.
        backoff_max: the cap of that pause, in seconds.

    Every request that can create something is safe to retry: ``submit`` and
    ``submit_batch`` give each evaluation a ``client_key`` (a uuid4, unless the caller gave
    one) and send the same bytes on every try, so the server answers a retried POST with
    the evaluation the first try created instead of creating a second.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8714",
        token: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 5,
        *,
        backoff: float = 0.5,
        backoff_max: float = 30.0,
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url must be http://HOST[:PORT][/PREFIX] or https://..., not %r" % url)
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.url = url.rstrip("/")
        self.token = token if token is not None else (os.environ.get("CKBENCH_TOKEN") or None)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.backoff_max = float(backoff_max)
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._rng = random.Random()

    def __repr__(self) -> str:
        return "Client(%r, token=%s)" % (self.url, "'***'" if self.token else None)

    # ---- evaluations ------------------------------------------------------------------

    def submit(
        self,
        workload: str,
        source: str,
        *,
        size: Optional[str] = None,
        threads: Optional[int] = None,
        seeds: Optional[int] = None,
        warmup: Optional[int] = None,
        iters: Optional[int] = None,
        client_key: Optional[str] = None,
    ) -> str:
        """Submits one candidate kernel for evaluation; returns the evaluation's id.

        ``workload`` is a workload id (``"1p"``), ``source`` the C text of the kernel.
        Options left ``None`` are not sent, so the server's defaults apply (size
        ``"default"``). ``client_key`` makes the submission idempotent; when ``None`` a
        fresh uuid4 is made, which still makes this call's own retries safe. Submitting
        the same ``client_key`` again with the same request returns the first
        evaluation's id; with a different request raises ``CkbenchError`` (409).
        """
        request = _evaluation_request(
            workload, source, size=size, threads=threads, seeds=seeds,
            warmup=warmup, iters=iters, client_key=client_key,
        )
        ev = self._request("POST", "/v1/evaluations", body=request)
        return _answer_id(ev)

    def submit_batch(self, requests: Iterable[Dict[str, Any]]) -> List[str]:
        """Submits many candidates; returns their evaluation ids in the order given.

        Each request is a dict of the fields of POST /v1/evaluations (``workload`` and
        ``source``, optionally ``size``, ``threads``, ``seeds``, ``warmup``, ``iters``,
        ``client_key``). The caller's dicts are not changed: copies are sent, with a
        uuid4 ``client_key`` added where one is missing. The list goes in chunks of 1000,
        one POST /v1/evaluations/batch each; a chunk is accepted whole or not at all. When
        a chunk fails, the chunks before it stay submitted: the raised ``CkbenchError``
        carries their ids in ``.submitted``.
        """
        items = []
        for i, r in enumerate(requests):
            if not isinstance(r, dict):
                raise TypeError("requests[%d] is a %s, not a dict" % (i, type(r).__name__))
            item = dict(r)
            if item.get("client_key") is None:
                item["client_key"] = str(uuid.uuid4())
            items.append(item)
        ids: List[str] = []
        for start in range(0, len(items), BATCH_LIMIT):
            chunk = items[start:start + BATCH_LIMIT]
            try:
                answer = self._request("POST", "/v1/evaluations/batch", body={"evaluations": chunk})
                evs = answer.get("evaluations") if isinstance(answer, dict) else None
                if not isinstance(evs, list) or len(evs) != len(chunk):
                    raise CkbenchError(None, "bad_response",
                                       "the batch answer does not hold %d evaluations" % len(chunk))
                ids.extend(_answer_id(ev) for ev in evs)
            except CkbenchError as e:
                e.submitted = list(ids)
                raise
        return ids

    def get(self, evaluation: EvaluationRef, wait: float = 0) -> Dict[str, Any]:
        """Returns the evaluation object of ``evaluation`` (an id, or an object with ``id``).

        With ``wait`` > 0 (seconds, at most 60) the server holds the request until the
        evaluation has finished or ``wait`` seconds passed, and answers either way.
        Raises ``CkbenchError`` (404) for an unknown id or one of another token.
        """
        wait = float(wait)
        if not 0 <= wait <= MAX_WAIT_S:
            raise ValueError("wait must be 0..%g seconds, not %r" % (MAX_WAIT_S, wait))
        query = {"wait": _seconds(wait)} if wait > 0 else None
        return self._request("GET", "/v1/evaluations/" + _path_id(evaluation), query=query,
                             read_timeout=self.timeout + wait)

    def wait(self, evaluations: Union[EvaluationRef, Iterable[EvaluationRef]],
             timeout: Optional[float] = None) -> Any:
        """Waits until evaluations have finished (done, failed or cancelled).

        ``evaluations`` is one id (or evaluation object), and then one evaluation object
        is returned, or a list of them, and then a list of objects in the same order. It
        long-polls with ``wait=min(60, time left)`` until each has finished. ``timeout``
        (seconds, shared by the whole list; ``None`` waits for ever) runs out: raises
        ``TimeoutError``; the evaluations keep running on the server.
        """
        deadline = None if timeout is None else time.monotonic() + max(0.0, float(timeout))
        if isinstance(evaluations, (str, dict)):
            return self._wait_one(_ref_id(evaluations), deadline)
        return [self._wait_one(_ref_id(e), deadline) for e in list(evaluations)]

    def evaluate(self, workload: str, source: str, *, timeout: Optional[float] = None,
                 **options: Any) -> Dict[str, Any]:
        """Submits one candidate and waits for it; returns the finished evaluation object.

        ``options`` are ``submit``'s (``size``, ``threads``, ``seeds``, ``warmup``,
        ``iters``, ``client_key``); ``timeout`` is ``wait``'s.
        """
        return self.wait(self.submit(workload, source, **options), timeout=timeout)

    def cancel(self, evaluation: EvaluationRef) -> Dict[str, Any]:
        """Cancels a queued or running evaluation; returns its object (state ``cancelled``).

        Cancelling one that is already cancelled returns it too (the server's 409 is
        checked with a GET), so a DELETE retried after a dropped connection does not
        fail; cancelling one that finished otherwise (done, failed) raises
        ``CkbenchError`` (409).
        """
        eid = _path_id(evaluation)
        try:
            return self._request("DELETE", "/v1/evaluations/" + eid)
        except CkbenchError as e:
            if e.status != 409:
                raise
            ev = self._request("GET", "/v1/evaluations/" + eid)
            if isinstance(ev, dict) and ev.get("state") == "cancelled":
                return ev
            raise

    # ---- workloads, prompts, feedback -----------------------------------------------

    def workloads(self) -> List[Dict[str, Any]]:
        """Returns the list of workload objects (each with its ``id``)."""
        answer = self._request("GET", "/v1/workloads")
        if not isinstance(answer, dict) or not isinstance(answer.get("workloads"), list):
            raise CkbenchError(None, "bad_response", "no \"workloads\" list in the answer")
        return answer["workloads"]

    def workload(self, workload: str) -> Dict[str, Any]:
        """Returns one workload's object."""
        return self._request("GET", "/v1/workloads/" + quote(workload, safe=""))

    def prompt(self, workload: str, method: Optional[str] = None, docs: Optional[bool] = None,
               size: Optional[str] = None) -> str:
        """Returns the prompt a model gets for ``workload``, as text.

        ``method`` is ``"best-of-n"``, ``"refine"``, ``"refine-docs"`` or ``"beam"``;
        ``docs`` includes the documentation; ``size`` the workload size. A parameter left
        ``None`` is not sent (the server's default applies).
        """
        query: Dict[str, str] = {}
        if method is not None:
            query["method"] = method
        if docs is not None:
            query["docs"] = "1" if docs else "0"
        if size is not None:
            query["size"] = size
        return self._request("GET", "/v1/workloads/%s/prompt" % quote(workload, safe=""),
                             query=query or None, text=True)

    def feedback(self, evaluation: EvaluationRef) -> str:
        """Returns the feedback text a model gets after an evaluation.

        ``evaluation`` is an evaluation id (``"ev_..."``), an evaluation object as
        ``get``/``wait`` return it (its ``id`` is sent), or a result object (the JSON
        ``ckbench eval`` prints, e.g. ``ev["result"]`` or one made locally), which is
        sent whole as ``{"evaluation": result}``.
        """
        if isinstance(evaluation, str):
            body: Dict[str, Any] = {"id": evaluation}
        elif isinstance(evaluation, dict) and "state" in evaluation and "id" in evaluation:
            body = {"id": evaluation["id"]}
        elif isinstance(evaluation, dict):
            body = {"evaluation": evaluation}
        else:
            raise TypeError("feedback takes an id, an evaluation object or a result object")
        return self._request("POST", "/v1/feedback", body=body, text=True)

    def health(self) -> Dict[str, Any]:
        """Returns GET /healthz's object (``{"status": "ok", ...}``)."""
        return self._request("GET", "/healthz")

    # ---- the transport ----------------------------------------------------------------

    def _wait_one(self, eid: str, deadline: Optional[float]) -> Dict[str, Any]:
        while True:
            start = time.monotonic()
            poll = MAX_POLL_S if deadline is None else max(0.0, min(MAX_POLL_S, deadline - start))
            ev = self.get(eid, wait=poll)
            if ev.get("state") in FINISHED_STATES:
                return ev
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise TimeoutError("evaluation %s has not finished (state %s)"
                                   % (eid, ev.get("state")))
            # An unfinished answer sooner than asked: do not spin.
            pause = min(poll, MIN_POLL_S) - (now - start)
            if deadline is not None:
                pause = min(pause, deadline - now)
            if pause > 0:
                time.sleep(pause)

    def _request(self, method: str, path: str, *, query: Optional[Dict[str, str]] = None,
                 body: Any = None, text: bool = False,
                 read_timeout: Optional[float] = None) -> Any:
        """Sends one request, retrying as the class says; returns the decoded answer.

        The body is encoded once, so every try sends the same bytes (the same
        ``client_key``s among them).
        """
        target = self._prefix + path + ("?" + urlencode(query) if query else "")
        headers = {
            "Accept": "text/plain" if text else "application/json",
            "User-Agent": "ckbench-client-python/0.1",
        }
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        timeout = self.timeout if read_timeout is None else read_timeout
        attempt = 0
        while True:
            try:
                status, reason, answer_headers, payload = self._send(method, target, data, headers, timeout)
            except (OSError, http.client.HTTPException) as exc:
                if attempt >= self.retries:
                    raise CkbenchError(None, "connection_error", "%s %s: %s: %s (after %d tries)" % (
                        method, self.url + target, type(exc).__name__, exc, attempt + 1)) from exc
                delay = self._backoff(attempt)
            else:
                if 200 <= status < 300:
                    return _decode(status, answer_headers, payload, text)
                err = _error(status, reason, answer_headers, payload)
                if status not in RETRY_STATUSES or attempt >= self.retries:
                    raise err
                delay = err.retry_after if err.retry_after is not None else self._backoff(attempt)
            time.sleep(delay)
            attempt += 1

    def _send(self, method: str, target: str, data: Optional[bytes], headers: Dict[str, str],
              timeout: float):
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=timeout)
        try:
            conn.request(method, target, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
            return resp.status, resp.reason, resp.headers, payload
        finally:
            conn.close()

    def _backoff(self, attempt: int) -> float:
        """The pause before try ``attempt + 2``: exponential, capped, with jitter."""
        full = min(self.backoff_max, self.backoff * (2 ** attempt))
        return full * (0.5 + 0.5 * self._rng.random())


# ---- helpers --------------------------------------------------------------------------

def _evaluation_request(workload: str, source: str, **options: Any) -> Dict[str, Any]:
    if not isinstance(workload, str) or not isinstance(source, str):
        raise TypeError("workload and source must be strings")
    request: Dict[str, Any] = {"workload": workload, "source": source}
    for name, value in options.items():
        if value is not None:
            request[name] = value
    if request.get("client_key") is None:
        request["client_key"] = str(uuid.uuid4())
    return request


def _ref_id(ref: Any) -> str:
    """The id of a caller's reference: an id, or an evaluation object."""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, dict) and isinstance(ref.get("id"), str):
        return ref["id"]
    raise TypeError("an evaluation id (str) or an evaluation object (dict with \"id\") is needed, not %r"
                    % (ref,))


def _answer_id(ev: Any) -> str:
    """The id of an evaluation object the server answered."""
    if isinstance(ev, dict) and isinstance(ev.get("id"), str):
        return ev["id"]
    raise CkbenchError(None, "bad_response", "the answer is not an evaluation object: %.200r" % (ev,))


def _path_id(ref: Any) -> str:
    return quote(_ref_id(ref), safe="")


def _seconds(s: float) -> str:
    """``wait=`` as sent: whole seconds as an integer, else to the millisecond."""
    s = round(s, 3)
    return str(int(s)) if s == int(s) else ("%.3f" % s).rstrip("0")


def _charset(headers) -> str:
    charset = headers.get_content_charset() if hasattr(headers, "get_content_charset") else None
    return charset or "utf-8"


def _decode(status: int, headers, payload: bytes, text: bool) -> Any:
    if text:
        return payload.decode(_charset(headers), errors="replace")
    if not payload:
        return None
    try:
        return json.loads(payload.decode("utf-8"))
    except ValueError as exc:
        raise CkbenchError(status, "bad_response", "the answer is not JSON: %s" % exc) from exc


def _error(status: int, reason: str, headers, payload: bytes) -> CkbenchError:
    code, message = "http_%d" % status, ""
    try:
        err = json.loads(payload.decode("utf-8")).get("error")
        if isinstance(err, dict):
            code = str(err.get("code") or code)
            message = str(err.get("message") or "")
    except (ValueError, AttributeError):
        message = payload.decode("utf-8", errors="replace").strip()[:500]
    e = CkbenchError(status, code, message or reason or "")
    e.retry_after = _retry_after(headers.get("Retry-After"))
    return e


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds (delay-seconds, or an HTTP date), capped; else None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return min(MAX_RETRY_AFTER_S, max(0.0, seconds))
