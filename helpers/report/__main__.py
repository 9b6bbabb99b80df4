"""`python -m helpers.report`: the command line of helpers.report."""

from helpers.report import main

raise SystemExit(main())
