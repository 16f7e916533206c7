"""Microsoft Teams, on the Microsoft 365 Agents SDK: activities in, Adaptive Cards out."""
