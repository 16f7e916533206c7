"""The question bank: YAML files read and checked, the bank itself, the authoring tools."""

from bot.bank.bank import BankError, Problem, QuestionBank
from bot.bank.loader import check_paths, load_bank

__all__ = ["BankError", "Problem", "QuestionBank", "check_paths", "load_bank"]
