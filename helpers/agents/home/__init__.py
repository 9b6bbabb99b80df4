"""A match at home, scored as the organisers score it, and its plots (map: helpers/agents/__init__.py)."""
