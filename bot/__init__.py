"""quizbot: a quiz bot for training-cluster study channels on Slack, Discord and the terminal."""

__version__ = "0.1.0"
