"""The kit's importable logic: notebooks stay thin and call into these modules.

Stage -> where its logic lives (each stage reads earlier ones only through the files helpers.layout names):

    any stage        config (profiles: frozen, typed sections), checks (what each key accepts), layout (every
                     file under runs/<run>/), io, records (the one question record), prompts (the chat prompt),
                     filters and edition (an edition's rules, data/editions/), moved (where old commands went)
    00 env check     env (env.facts, env.recommend, env.report: env.json), env.rules (known problems), env.memory,
                     env.pinsets (make setup's pins), env.box (the box's torch stack), env.stack (Unsloth's needs),
                     env.gpu_setup (make setup-gpu), env.wheels (make gpu-wheels: an offline GPU box's wheels)
    01 dataset       data (data.build, data.balance, data.summary), data.readers, data.hub, data.rows (row mappers),
                     data.convert (open-ended -> choices), data.sizes (rows before the build); puzzles (the puzzle families, mapped in
                     helpers/puzzles/__init__.py)
    02 curriculum    curriculum (the stage: curriculum.order, curriculum.schedule (lr / replay per chunk),
                     curriculum.stats, curriculum.plots, curriculum.files),
                     difficulty (0-10 scores and buckets, shared with validation)
    03/04/05 train   train (train.run: the chunk loop; train.adapter: base + adapter; train.state: what a run
                     carries and resumes; train.outputs: summary, adapter, plot; train.progress; train.world:
                     ranks), train.replay (reservoir, chunk mixing), train.data (tokenised examples), train.hf
                     (Trainer seam), train.checkpoints (atomic, resumable), train.telemetry, train.plan (hours)
    models           models (models.load, models.adapters, models.settings, models.unsloth_api), models.members (a run's
                     adapters, CPU threads), models.tiny / models.packaged (offline), models.cache, models.compat, models.release
    06 / 07          scoring (letter scoring), evaluate (evaluate.rows, evaluate.score, evaluate.metrics:
                     accuracy, calibration, buckets), evaluate.plots; ensemble (07)
    08-10 agents     agents (Q/A agents, match, harness export; command lines in agents.harness.cli)
    make pipeline    pipeline (papermill); report, report.build, report.sections, report.render (report.md/.html);
                     rehearse (make rehearse: a GPU profile on CPU, configs/overlays/rehearsal.yaml's swaps)
    make gpu-check   gpu_check (above the stages it runs: gpu_check.run, the steps and report.html; gpu_check.inputs,
                     the device and what it trains; gpu_check.checks, training, letters, agents; gpu_check.steps)
"""

__version__ = "0.1.0"
