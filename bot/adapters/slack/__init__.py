"""Slack, on Bolt: ``app`` wires Bolt and serves, ``handlers`` answers, ``render`` draws.

The underscored modules are Slack's own features, with no counterpart on the other platforms:
the OAuth install (``_oauth``), the guard against replayed and redelivered requests
(``_replay``), the App Home tab (``_home``), joining a public channel so its reactions arrive
(``_channels``), the names its payloads carry (``_names``) and the count of its Web API errors
from inside the client's retries (``_metrics``).
"""
