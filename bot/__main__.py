"""Run the ``quizbot`` command as ``python -m bot``."""

from bot.cli import main

raise SystemExit(main())
