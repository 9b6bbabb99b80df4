"""Tournament agents: the A-agent (letter scoring), the Q-agent (verified puzzles + model-written questions),
the harness export, and a match simulator. Nothing here imports torch or transformers at import time.
"""
