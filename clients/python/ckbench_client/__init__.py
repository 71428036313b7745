"""ckbench_client: a Python client for the ckbench serve HTTP API (v1).

Standard library only::

    from ckbench_client import Client, CkbenchError
    c = Client("http://127.0.0.1:8714")          # token: Client(token=...) or $CKBENCH_TOKEN
    ev = c.evaluate("1p", open("kernel.c").read(), size="small")
    print(ev["state"], ev.get("result", {}).get("speedup"))

See ``Client`` for the whole API and the README for retries and idempotency.
"""

from .client import BATCH_LIMIT, FINISHED_STATES, CkbenchError, Client

__all__ = ["Client", "CkbenchError", "FINISHED_STATES", "BATCH_LIMIT", "__version__"]
__version__ = "0.1.0"
