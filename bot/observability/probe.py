"""``python -m bot.observability.probe [PATH]``: exit 0 if the local health endpoint says ok.

The container image's HEALTHCHECK runs this: the slim base image has no curl, and the probe
must not need the database (liveness is about the process; readiness is /readyz).
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

DEFAULT_PORT = 8080


def probe(path: str = "/healthz", *, port: int | None = None, timeout: float = 4.0) -> bool:
    """Return True when http://127.0.0.1:PORT/PATH answers 200 (PORT: QUIZBOT_OPS_PORT)."""
    if port is None:
        named = os.environ.get("QUIZBOT_OPS_PORT") or os.environ.get("QUIZBOT_HEALTH_PORT")
        port = int(named or DEFAULT_PORT)
    url = f"http://127.0.0.1:{port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main(argv: list[str]) -> int:
    """Probe the path given (default /healthz) and return the exit status."""
    return 0 if probe(argv[0] if argv else "/healthz") else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
