"""`python -m helpers.agents question|answer ...`: see helpers.agents.cli."""

from helpers.agents.cli import main

raise SystemExit(main())
