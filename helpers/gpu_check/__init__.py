"""make gpu-check (`python -m helpers.gpu_check`): the kit's own GPU path run on this box in minutes.

    run       the steps in order (run_check), gpu-check.json, and the one-page report.html
    inputs    the device (the GPU, or --device cpu; its memory and peaks), the profile with configs/overlays/
              gpu-check.yaml, the model (tiny, or a checked local folder), the questions
    checks    LoRA, rsLoRA, DoRA through helpers.train with the "will it fit" estimate against the measured peak;
              letter scoring and generation on the device against a CPU process; the reasoner; two GRPO steps
    steps     the record (pass, fail, skip with a reason per step), versions
Nothing heavy is imported here: torch, transformers and the rest load inside the steps, after --device cpu hid the GPUs.
"""

from helpers.gpu_check.run import default_out, run_check

__all__ = ["default_out", "run_check"]
