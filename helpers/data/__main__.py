"""`python -m helpers.data`: the command line of helpers.data."""

from helpers.data import main

raise SystemExit(main())
