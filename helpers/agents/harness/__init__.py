"""What the organisers' harness runs: the kit's QAgent/AAgent, their export and the harness-flag command lines
(map: helpers/agents/__init__.py)."""
