"""The environment check: this machine's facts, known problems, recommended settings, the box's torch stack.

    facts      collect_facts: the machine probed into one JSON record
    rules      known problems checked against the facts, each with its fix
    recommend  settings for this machine (dtype, optimizer, 4-bit, attention, Unsloth, env vars); apply_env
    report     env.json written (notebook 00) and read back (read_recommendation)
    memory     "will it fit": peak training memory from a model's shapes
    box        the box's torch stack (standard library only: make setup runs it before installing anything)
    stack      what the pinned Unsloth wheels require of that stack; gpu_setup: make setup-gpu
    wheels     make gpu-wheels: the exact folder of wheels an offline GPU box carries in (<= 60 MiB)
Importing this package imports the standard library only (torch is probed in functions), so `apply_env` runs first.
"""

from helpers.env.facts import collect_facts, dir_size, disk_free, empty_facts, hf_cache_paths
from helpers.env.recommend import apply_env, recommend
from helpers.env.report import read_recommendation, write_env_report
from helpers.env.rules import checks_table, evaluate, summarize

__all__ = ["apply_env", "checks_table", "collect_facts", "dir_size", "disk_free", "empty_facts", "evaluate",
           "hf_cache_paths", "read_recommendation", "recommend", "summarize", "write_env_report"]
