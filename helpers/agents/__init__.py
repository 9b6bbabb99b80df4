"""Tournament agents: the A-agent (letter scoring, or reasoning then the letter), the Q-agent (verified puzzles +
model-written questions); the stages that train and measure its writer and reasoner; the harness export; a match at
home. Nothing here imports torch or transformers at import time, and no match-time module imports the stages.

What plays a match (this folder):
    build       the agents of a profile: settings (the stages' decisions read from the run), members, Q- and A-agents
    answer      the A-agent;  predictor: letter probabilities from one member or an ensemble
    reasoner    the reasoning A-agent's writing: a deduction stopped by the deadline, the letter scored after it
    question    the Q-agent;  writer: model-written questions, proven before use;  topics: the topics file
    inputs      harness prompts and question objects parsed leniently;  json_repair: model JSON mended
    timing      budgets and latency summaries
    rewards     the reasoner's verifiable rewards (correct letter, answer filter, token budget) for reinforcement
The offline stages (`python -m helpers.agents.stages writer|reasoner|rl`):
    stages.own_adapter      an agent's own adapter (writer, reasoner) trained by the notebooks' machinery
    stages.writer_data      training chats for a question writer (the harness's prompt -> a generated question's JSON)
    stages.writer_train     the writer's stage: its adapter trained, then measured; the share written to the run
    stages.writer_measure   the writer against the base, and the model_question_share that justifies
    stages.reasoner_data    training chats for the reasoner (a solver's deduction, then the letter)
    stages.reasoner_train   the reasoner's stage: its adapter trained, then measured; the mode written to the run
    stages.reasoner_measure letter-only against reasoning, and the answer_mode that justifies
    stages.reasoner_rl      the reasoner's reinforcement stage: GRPO (TRL + PEFT) on fresh puzzles with the kit's rewards
The organisers' harness (`python -m helpers.agents question|answer`, `python -m helpers.agents.harness export`):
    harness.kit_agents      QAgent/AAgent classes the organisers' scripts import
    harness.export          the harness folder: class files, kit_agent.json, adapters, the kit's helpers
    harness.cli             `python -m helpers.agents question|answer` with the harness's flags
    harness.check           the exported classes called as the harness calls them
The match at home:
    home.match  two teams, the organisers' scoring;  home.teams: the base model's and the original team's teams
    home.plots  latency and match plots;  home.seeding: the elimination round on the held-out seeding set
"""
