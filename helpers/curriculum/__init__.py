"""The curriculum stage (notebook 02): order the training records easy to hard, cut them into chunks, report them.

Parts: order (difficulty order, chunks), schedule (learning rate and replay share per chunk), stats (counts,
histogram), plots (difficulty, chunk mix), files (read data/train.jsonl, write curriculum/). Difficulty itself is
scored in helpers.difficulty; the replay buffer the trainer fills is helpers.train.replay.
"""

from helpers.curriculum.files import load_train, write_curriculum
from helpers.curriculum.order import chunk_sizes, order_and_chunk
from helpers.curriculum.plots import plot_chunk_mix, plot_difficulty
from helpers.curriculum.stats import curriculum_stats

__all__ = ["chunk_sizes", "curriculum_stats", "load_train", "order_and_chunk", "plot_chunk_mix", "plot_difficulty",
           "write_curriculum"]
