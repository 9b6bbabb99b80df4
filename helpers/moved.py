"""Command lines that moved: `python -m <old module>` says where the command lives now and exits 2.

A module that was once run as a command and is now only a library (its command moved to its package's __main__)
ends with `if __name__ == "__main__": moved.refuse(__spec__.name)`, so an old line from a team's notes or shell
history never exits 0 having done nothing. The table is the one place that knows where each went.
"""

from __future__ import annotations

import sys
from typing import NoReturn

MOVED = {
    "helpers.env.memory": "python -m helpers.env memory --model NAME [...]",
    "helpers.env.gpu_setup": "python -m helpers.env gpu-setup download|install|plan|check",
    "helpers.agents.question": "python -m helpers.agents question --output_file FILE --num_questions N [...]",
    "helpers.agents.answer": "python -m helpers.agents answer --input_file FILE --output_file FILE [...]",
    "helpers.models.packaged": "python -m helpers.models install|convert",
    "helpers.env gpu-check": "python -m helpers.gpu_check [--device auto|cpu] [--model PATH] [...] (make gpu-check)",
}


def refuse(module: str) -> NoReturn:
    """Print where `module`'s command lives now (one line, to stderr) and exit 2."""
    where = MOVED.get(module)
    line = (f"python -m {module} is not a command any more; it moved to: {where}" if where else
            f"python -m {module} is not a command; the kit's command lines are listed in docs/testing.md")
    print(line, file=sys.stderr)
    raise SystemExit(2)
