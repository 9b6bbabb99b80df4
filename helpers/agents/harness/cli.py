"""The agents' command lines, with the harness's flags and files (apart from the agent classes they drive).

    python -m helpers.agents question --output_file outputs/questions.json --num_questions 20 [--batch_size 5]
        [--profile smoke] [--run NAME] [--topics_file data/topics.json] [--model_share 0.2]
    python -m helpers.agents answer --input_file outputs/filtered_questions.json --output_file outputs/answers.json
        [--batch_size 5] [--profile smoke] [--run NAME]

Each writes its file, the filtered_ file the harness scores and a .report.json of timings and counts.
"""

from __future__ import annotations

import argparse
import sys

from helpers import config
from helpers.agents import answer as answer_mod
from helpers.agents import build
from helpers.agents import question as question_mod
from helpers.io import InputError


def question_main(argv: list[str] | None = None) -> int:
    """Command line: the harness's question-agent flags plus the kit's --profile/--run/--topics_file."""
    ap = argparse.ArgumentParser(prog="python -m helpers.agents question",
                                 description=question_mod.__doc__.splitlines()[0])
    ap.add_argument("--output_file", default="outputs/questions.json")
    ap.add_argument("--num_questions", type=int, default=20)
    ap.add_argument("--batch_size", type=int, default=5)
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--run", default=None)
    ap.add_argument("--topics_file", default=None,
                    help="an organisers' topics.json (default: the topics of the profile's edition, agents.edition)")
    ap.add_argument("--model_share", type=float, default=None, help="share of questions the model tries first")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.num_questions < 1:
        print("question agent: --num_questions must be at least 1", file=sys.stderr)
        return 2
    try:
        cfg = config.load_profile(args.profile, args.run)
        agent, info = build.kit_question_agent(cfg, topics_file=args.topics_file, model_share=args.model_share,
                                               seed=args.seed)
        questions, metas = question_mod.run_questions(agent, args.num_questions, batch_size=args.batch_size,
                                                      progress=args.verbose)
        report = question_mod.write_question_files(agent, questions, metas, args.output_file,
                                                   requested=args.num_questions, batch_size=args.batch_size,
                                                   extra={"build": info})
    except (InputError, KeyError, ValueError) as exc:
        print(f"question agent: {exc}", file=sys.stderr)
        return 2
    for line in report["unserved"]:
        print(line)
    lat = report["latency"]
    print(f"{report['written']} questions, {report['format_correct']} format-correct ({report['sources']}); "
          f"p50 {lat['p50_s']:.3f} s, p99 {lat['p99_s']:.3f} s of {lat['limit_s']:.0f} s -> {args.output_file}")
    return 0 if not report["disqualified"] else 1


def answer_main(argv: list[str] | None = None) -> int:
    """Command line: the harness's answer-agent flags plus the kit's --profile/--run."""
    ap = argparse.ArgumentParser(prog="python -m helpers.agents answer",
                                 description=answer_mod.__doc__.splitlines()[0])
    ap.add_argument("--input_file", default="outputs/filtered_questions.json")
    ap.add_argument("--output_file", default="outputs/answers.json")
    ap.add_argument("--batch_size", type=int, default=5)
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--run", default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    try:
        questions = answer_mod.read_question_file(args.input_file)
        cfg = config.load_profile(args.profile, args.run)
        agent, selection = build.kit_answer_agent(cfg)
        answers, metas = answer_mod.run_answers(agent, questions, batch_size=args.batch_size, progress=args.verbose)
        report = answer_mod.write_answer_files(agent, questions, answers, metas, args.output_file,
                                               batch_size=args.batch_size, extra={"selection": selection})
    except (InputError, KeyError, ValueError) as exc:
        print(f"answer agent: {exc}", file=sys.stderr)
        return 2
    lat = report["latency"]
    print(f"{report['answers']} answers ({report['passed_filter']} pass the filter), "
          f"fallbacks {report['fallbacks'] or 0}; "
          f"p50 {lat['p50_s']:.3f} s, p99 {lat['p99_s']:.3f} s of {lat['limit_s']:.0f} s -> {args.output_file}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`question ...` or `answer ...`: the agent to run, then its flags."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"question": question_main, "answer": answer_main}
    if not argv or argv[0] not in commands:
        print(f"usage: python -m helpers.agents {{{','.join(commands)}}} [flags] (--help after the agent's name)",
              file=sys.stderr)
        return 2
    return commands[argv[0]](argv[1:])
