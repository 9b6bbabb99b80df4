"""Tournament agents: the A-agent (letter scoring, or reasoning then the letter), the Q-agent (verified puzzles + model-written questions),
the harness export, and a match simulator. Nothing here imports torch or transformers at import time.

    build       the agents of a profile: settings, members to load, the Q- and A-agents
    answer      the A-agent;  predictor: letter probabilities from one member or an ensemble
    reason      the reasoning A-agent's writing: a deduction stopped by the deadline, the letter scored after it
    reason_train the reasoner's stage: chats, its adapter, then measured;  reason_measure: letter vs reasoning, the mode
    own_adapter an agent's own adapter (writer, reasoner) trained by the notebooks' machinery
    question    the Q-agent;  writer: model-written questions, proven before use;  topics: the topics file
    writer_data training chats for a question writer (the harness's prompt -> a generated question's JSON)
    writer_train the writer's stage: its adapter trained, then measured;  writer_measure: the measurement, the share
    inputs      harness prompts and question objects parsed leniently;  json_repair: model JSON mended
    timing      budgets and latency summaries;  files: the harness's output file names
    match       a match at home (two teams, the organisers' scoring);  plots: latency and match plots
    harness     QAgent/AAgent classes the organisers' scripts import;  export: the harness folder
    cli         `python -m helpers.agents question|answer` with the harness's flags
"""
