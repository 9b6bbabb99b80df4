"""The multiple-choice dataset, from upstream rows to train / val files and a report.

    build      the build: read, convert, generate, validate, dedupe, split, balance, write (every row counted)
    balance    answer letters balanced per choice count, positional choices kept in place
    summary    the report as a text table and a PNG
    readers    upstream files; hub: hub datasets; rows: row mappers; convert: open-ended -> choices
"""

from helpers.data.balance import balance_letters, letter_counts, positional
from helpers.data.build import build_dataset, build_splits
from helpers.data.summary import plot_report, summary_table

__all__ = ["balance_letters", "build_dataset", "build_splits", "letter_counts", "plot_report", "positional",
           "summary_table"]
