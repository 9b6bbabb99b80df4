"""The run layout: every file a stage writes under runs/<run>/, named once.

Stages talk to each other only through these files, so each name lives here and nowhere else: helpers and
notebooks ask `RunLayout.of(cfg)` for a path instead of spelling it. `STAGES` is the stage table (which notebook
reads and writes what); tests/test_structure.py holds it against the README's table.

    lay = RunLayout.of(cfg)            # runs/<cfg.run>/ ($KIT_RUNS_DIR honoured)
    lay.val_data                       # runs/<run>/data/val.jsonl
    lay.adapter_dir("model1_lora")     # runs/<run>/models/model1_lora/adapter
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from helpers import config

# The files inside one adapter's folder (models/<name>/, or train's --out-dir): named here for every reader.
ADAPTER, METRICS, MODEL_SUMMARY, TRAINING_PLOT = "adapter", "metrics.jsonl", "summary.json", "training.png"
# make gpu-check's run folders: a GPU's, and a CPU rehearsal's (DEVICE=cpu), so one never overwrites the other.
GPU_CHECK_RUN, GPU_CHECK_CPU_RUN = "gpu-check", "gpu-check-cpu"
# make gpu-wheels' folder: the wheels an offline GPU box carries in (helpers.env.wheels).
GPU_WHEELS = "gpu-wheels"
# The files of the dataset folder (data/, or `python -m helpers.data build --out DIR`).
TRAIN_DATA, VAL_DATA, DATA_REPORT = "train.jsonl", "val.jsonl", "report.json"


def filtered_name(path: str | Path) -> Path:
    """The harness's filtered file beside an agent's output file: outputs/answers.json ->
    outputs/filtered_answers.json (any name gets the prefix)."""
    path = Path(path)
    return path.with_name(f"filtered_{path.name}")


def report_name(path: str | Path) -> Path:
    """The kit's per-item timings and counts beside an agent's output file: outputs/answers.json ->
    outputs/answers.report.json."""
    path = Path(path)
    return path.with_name(f"{path.stem}.report.json")


@dataclass(frozen=True)
class RunLayout:
    """The folder of one run and the name of every artifact in it (paths only: nothing is created here)."""

    root: Path

    @classmethod
    def of(cls, cfg: config.Profile | str) -> RunLayout:
        """The layout of a run: a resolved profile (its "run") or a run name, under config.runs_root()."""
        return cls(config.runs_root() / (cfg if isinstance(cfg, str) else cfg.run))

    def made(self, folder: Path) -> Path:
        """`folder` (one of this layout's folders), created if missing."""
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def rel(self, path: Path) -> str:
        """A path of this run as the report links it: relative to the run folder, forward slashes."""
        return path.relative_to(self.root).as_posix()

    # 00 env check
    @property
    def env(self) -> Path:
        return self.root / "env.json"

    @property
    def fit_plot(self) -> Path:
        return self.root / "env" / "fit.png"

    # 01 dataset build
    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def train_data(self) -> Path:
        return self.data_dir / TRAIN_DATA

    @property
    def val_data(self) -> Path:
        return self.data_dir / VAL_DATA

    @property
    def data_report(self) -> Path:
        return self.data_dir / DATA_REPORT

    @property
    def data_plot(self) -> Path:
        return self.data_dir / "report.png"

    # 02 curriculum
    @property
    def curriculum_dir(self) -> Path:
        return self.root / "curriculum"

    @property
    def curriculum(self) -> Path:
        return self.curriculum_dir / "train.jsonl"

    @property
    def curriculum_stats(self) -> Path:
        return self.curriculum_dir / "stats.json"

    @property
    def difficulty_plot(self) -> Path:
        return self.curriculum_dir / "difficulty.png"

    @property
    def chunk_mix_plot(self) -> Path:
        return self.curriculum_dir / "chunk_mix.png"

    # 03/04/05 training: one folder per adapter
    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    def model_dir(self, name: str) -> Path:
        return self.models_dir / name

    def adapter_dir(self, name: str) -> Path:
        return self.model_dir(name) / ADAPTER

    def metrics(self, name: str) -> Path:
        return self.model_dir(name) / METRICS

    def model_summary(self, name: str) -> Path:
        return self.model_dir(name) / MODEL_SUMMARY

    def training_plot(self, name: str) -> Path:
        return self.model_dir(name) / TRAINING_PLOT

    # 06 validate
    @property
    def eval_dir(self) -> Path:
        return self.root / "eval"

    def eval_rows(self, name: str) -> Path:
        return self.eval_dir / f"{name}.jsonl"

    def eval_plot(self, name: str) -> Path:
        return self.eval_dir / f"{name}.png"

    @property
    def eval_summary(self) -> Path:
        return self.eval_dir / "summary.json"

    # 07 ensemble
    @property
    def ensemble_dir(self) -> Path:
        return self.root / "ensemble"

    @property
    def ensemble_summary(self) -> Path:
        return self.ensemble_dir / "summary.json"

    def ensemble_plot(self, name: str) -> Path:
        return self.ensemble_dir / f"{name}.png"

    # 08-10 agents
    @property
    def agents_dir(self) -> Path:
        return self.root / "agents"

    @property
    def questions(self) -> Path:
        return self.agents_dir / "questions.json"

    @property
    def filtered_questions(self) -> Path:
        """What the opponent gets: the questions that pass the format filter."""
        return filtered_name(self.questions)

    @property
    def answers(self) -> Path:
        return self.agents_dir / "answers.json"

    @property
    def tournament(self) -> Path:
        return self.agents_dir / "tournament.json"

    @property
    def elimination(self) -> Path:
        """The elimination round at home: the A-agent on the seeding set, by topic, against its own questions."""
        return self.agents_dir / "elimination.json"

    def agents_plot(self, name: str) -> Path:
        return self.agents_dir / f"{name}.png"

    @property
    def writer_data(self) -> Path:
        """The question writer's training chats (its adapter: adapter_dir(config.WRITER))."""
        return self.agents_dir / "writer_train.jsonl"

    @property
    def writer_report(self) -> Path:
        """The writer measured against the base, and the model_question_share it justifies."""
        return self.agents_dir / "writer.json"

    @property
    def reasoner_data(self) -> Path:
        """The reasoning A-agent's training chats (its adapter: adapter_dir(config.REASONER))."""
        return self.agents_dir / "reasoner_train.jsonl"

    @property
    def reasoner_data_counts(self) -> Path:
        """Where the reasoner's chats came from (deductions, link chains) and what was left out or redrawn, by
        reason."""
        return self.agents_dir / "reasoner_train.counts.json"

    @property
    def reasoner_report(self) -> Path:
        """Letter-only against reasoning on held-out puzzles, and the answer_mode it justifies."""
        return self.agents_dir / "reasoner.json"

    @property
    def rl_data(self) -> Path:
        """The reinforcement stage's prompts: fresh solver-proven puzzles with their key (its adapter:
        adapter_dir(config.REASONER_RL), its checkpoints: rl_checkpoints)."""
        return self.agents_dir / "reasoner_rl_prompts.jsonl"

    @property
    def rl_report(self) -> Path:
        """The reinforcement stage's report: rewards per logged step, seconds per step, zero rewards by reason."""
        return self.agents_dir / "reasoner_rl.json"

    @property
    def rl_checkpoints(self) -> Path:
        """The reinforcement stage's trainer checkpoints (checkpoint-<step>/, pointed at by latest.json beside it)."""
        return self.model_dir(config.REASONER_RL) / "checkpoints"

    @property
    def export_dir(self) -> Path:
        return self.agents_dir / "export"

    # make pipeline
    @property
    def notebooks_dir(self) -> Path:
        return self.root / "notebooks"

    def executed_notebook(self, stem: str) -> Path:
        return self.notebooks_dir / f"{stem}.ipynb"

    @property
    def pipeline_record(self) -> Path:
        return self.root / "pipeline.json"

    @property
    def terminal_log(self) -> Path:
        """What the pipeline and its notebook kernels wrote to the terminal (the kernels' own log lines too)."""
        return self.root / "terminal.txt"

    @property
    def rehearsal_record(self) -> Path:
        """make rehearse: the profile's keys the rehearsal swapped (from, to, why); absent in a real run."""
        return self.root / "rehearsal.json"

    # make gpu-check (helpers.gpu_check): its own folder (GPU_CHECK_RUN), with models/, curriculum/ and agents/
    # as a run has them, report.html, and these
    @property
    def gpu_check_record(self) -> Path:
        """Every step's status, reason and figures, the device and the versions."""
        return self.root / "gpu-check.json"

    @property
    def gpu_check_log(self) -> Path:
        """What the libraries printed while the steps ran (the terminal shows one line a step)."""
        return self.root / "gpu-check.log"

    @property
    def gpu_check_plot(self) -> Path:
        """The three methods' loss, memory and tokens/s on one figure (inlined in report.html)."""
        return self.root / "gpu-check.png"

    @property
    def gpu_check_facts(self) -> Path:
        """The env check's facts, probed in a process of their own."""
        return self.root / "env-facts.json"

    def gpu_check_side(self, side: str, part: str) -> Path:
        """A side of the letters ("cpu" or "device", each a process of its own): its "spec" (what to score), its
        "result" and its "log" (<side>-side.log)."""
        return self.root / (f"{side}-side.log" if part == "log" else f"{side}-side-{part}.json")

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def report_html(self) -> Path:
        return self.root / "report.html"


@dataclass(frozen=True)
class Stage:
    """One row of the stage table: the notebooks of a stage and the run files they read and write."""

    numbers: tuple[str, ...]
    notebooks: tuple[str, ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]


def _stages() -> tuple[Stage, ...]:
    """The stage table, its paths taken from a layout rooted at "." (so they read as runs/<run>/...)."""
    lay, name = RunLayout(Path(".")), "<name>"
    trained = (lay.adapter_dir(name), lay.metrics(name), lay.model_summary(name), lay.training_plot(name))
    agent_adapters = tuple(lay.adapter_dir(n) for n in (config.WRITER, config.REASONER, config.REASONER_RL))
    rows = [
        (("00",), ("00_env_check",), (), (lay.env,)),
        (("01",), ("01_dataset_build",), (), (lay.train_data, lay.val_data, lay.data_report)),
        (("02",), ("02_curriculum",), (lay.train_data,), (lay.curriculum, lay.curriculum_stats)),
        (("03", "04", "05"), ("03_train_model1_lora", "04_train_model2_rslora", "05_train_model3_dora"),
         (lay.env, lay.curriculum), trained),
        (("06",), ("06_validate",), (lay.adapter_dir(name), lay.val_data), (lay.eval_rows(name), lay.eval_summary)),
        (("07",), ("07_ensemble",), (lay.eval_rows(name), lay.eval_summary), (lay.ensemble_summary,)),
        (("08",), ("08_agents_train",), (lay.env,),
         (lay.writer_data, lay.adapter_dir(config.WRITER), lay.reasoner_data, lay.reasoner_data_counts,
          lay.adapter_dir(config.REASONER), lay.rl_data, lay.adapter_dir(config.REASONER_RL), lay.rl_report)),
        (("09",), ("09_agents_measure",), (lay.env, lay.adapter_dir(name), lay.ensemble_summary, lay.eval_summary,
                                            *agent_adapters, lay.reasoner_data, lay.rl_report),
         (lay.writer_report, lay.reasoner_report)),
        (("10",), ("10_agents_match",), (lay.env, lay.adapter_dir(name), lay.ensemble_summary, lay.eval_summary,
                                          *agent_adapters, lay.writer_report, lay.reasoner_report),
         (lay.questions, lay.answers, lay.tournament, lay.elimination, lay.export_dir)),
    ]
    return tuple(Stage(nums, nbs, tuple(lay.rel(p) for p in reads), tuple(lay.rel(p) for p in writes))
                 for nums, nbs, reads, writes in rows)


STAGES = _stages()
# "03" -> "03_train_model1_lora": every notebook of the pipeline by its number.
NOTEBOOKS = {num: nb for stage in STAGES for num, nb in zip(stage.numbers, stage.notebooks)}
