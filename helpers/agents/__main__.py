"""`python -m helpers.agents question|answer ...`: see helpers.agents.harness.cli."""

from helpers.agents.harness.cli import main

raise SystemExit(main())
