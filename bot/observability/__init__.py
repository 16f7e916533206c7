"""What operators see: Prometheus metrics, health and readiness probes, graceful shutdown.

``metrics`` needs only prometheus-client and may be imported from any layer; ``health`` (aiohttp)
and ``drain`` are for the processes that serve.
"""
