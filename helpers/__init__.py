"""The kit's importable logic: notebooks stay thin and call into these modules.

Stage -> where its logic lives (each stage reads earlier ones only through the files helpers.layout names):

    any stage        config (profiles, typed and checked), layout (every file under runs/<run>/), io, records
                     (the one question record), prompts (the chat prompt), filters (the organisers' filters)
    00 env check     env (facts, recommendation), env.rules (known problems), env.memory ("will it fit"),
                     env.box (the box's torch stack: recorded, held, compared), env.stack (what the Unsloth
                     wheels require of it), env.gpu_setup (make setup-gpu: pinned Unsloth, that stack untouched)
    01 dataset       data (build), data.readers (upstream files), data.hub (hub datasets), data.rows (row
                     mappers), data.convert (open-ended -> choices); puzzles, puzzles.seating, puzzles.family,
                     puzzles.arrangements (the organisers' seating kinds: builds them, on puzzles.seat_text
                     (their words), puzzles.seat_solver (their solver, on puzzles.csp) and puzzles.seat_world
                     (the hidden world's plain-Python truths), puzzles.seat_parse (a seating text read back
                     into its puzzle, to prove questions another writer produced)),
                     puzzles.kin_parse (the same for blood-relation texts), puzzles.blind (what options give away),
                     puzzles.kinship (pointing chains, coded relations, gender inference: the public face of
                     puzzles.kin_pointing, puzzles.kin_coded, puzzles.kin_gender, one a kind, on the shared
                     puzzles.kin_words (vocabulary, last checks) and puzzles.kin_facts (named facts by gender)):
                     the tournament's puzzle generators, each answer proven by a solver
    02 curriculum    curriculum (difficulty, chunks, replay schedule)
    03/04/05 train   train (the chunk loop), train.data (tokenised examples), train.hf (Trainer seam),
                     train.checkpoints (atomic, resumable), train.telemetry (metrics, live plot)
    models           models (load a base, attach adapters), models.members (a run's adapters for inference, the
                     CPU-thread rule), models.tiny / models.packaged (offline models), models.cache, models.compat,
                     models.release (free a model's memory before the next one loads)
    06 validate      scoring (letter scoring), evaluate (accuracy, calibration, buckets), evaluate.plots
    07 ensemble      ensemble
    08 agents        agents (Q/A agents, match, harness export; command lines in agents.cli)
    make pipeline    pipeline (papermill); report, report.sections, report.render (report.md / report.html);
                     rehearse (make rehearse: a GPU profile on CPU, configs/overlays/rehearsal.yaml's swaps)
"""

__version__ = "0.1.0"
