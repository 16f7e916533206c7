"""The Discord adapter: ``app`` wires discord.py, ``handlers`` answers, ``render`` draws."""
