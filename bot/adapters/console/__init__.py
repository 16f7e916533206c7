"""The terminal as a platform: ``app`` runs the session, ``handlers`` answers, ``render`` draws."""
