"""`python -m helpers.train`: the command line of helpers.train."""

from helpers.train import main

raise SystemExit(main())
