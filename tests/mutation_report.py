"""``make mutate``'s report: mutmut's verdicts per module, then ``mutation score <percent>``.

Run as ``python -m tests.mutation_report`` from the checkout's root after ``mutmut run``.
It reads the ``mutants/booking_core/<module>.py.meta`` files mutmut writes (one JSON file
per mutated module, each mutant's name mapped to the exit code of its test run) and
names the verdicts with mutmut's own table (``mutmut.stats.status_by_exit_code``):

- killed: ``killed`` and ``timeout`` (a mutant that makes the tests hang is caught), and
  ``caught by type check`` and ``segfault`` should they ever appear;
- survivors: ``survived`` (its tests pass) and ``no tests`` (no unit test reaches it);
- ``suspicious`` (an exit code mutmut does not know): counted in the total, never as
  killed, and listed with the survivors, so it lowers the score until someone looks;
- ``not checked``, ``skipped`` or ``interrupted`` mean an unfinished run: left out of
  the total and reported on a line of their own, before the score.

The score is killed / total over the modules mutmut ran, in percent with one decimal.
The survivors' names, one block per module, go to ``mutants/survivors.txt``; ``mutmut
show <name>`` prints one's diff. ``--diffs DIR`` also writes ``DIR/<module>.txt`` with
every survivor's diff (what ``mutmut show`` prints), one block per mutant.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

from mutmut.stats import status_by_exit_code

MUTANTS = Path("mutants")
KILLED = frozenset({"killed", "timeout", "caught by type check", "segfault"})
SURVIVED = frozenset({"survived", "no tests", "suspicious"})


def meta_files() -> Iterator[Path]:
    """The results of every mutated module, in name order."""
    yield from sorted(MUTANTS.rglob("*.py.meta"))


def in_order(name: str) -> tuple[str, int]:
    """``..._mutmut_9`` before ``..._mutmut_10``."""
    stem, _, number = name.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (name, 0)


def source_of(meta: Path) -> Path:
    """``mutants/booking_core/money.py.meta`` -> ``booking_core/money.py``."""
    return meta.relative_to(MUTANTS).with_suffix("")


def write_diffs(directory: Path, survivors: dict[str, list[tuple[str, str]]]) -> None:
    """One file per module with each survivor's diff, as ``mutmut show`` prints it."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    directory.mkdir(parents=True, exist_ok=True)
    for module, names in survivors.items():
        source = Path(*module.split(".")).with_suffix(".py")
        blocks = [
            f"# {name}: {status}\n{get_diff_for_mutant(name, path=source)}\n"
            for name, status in names
        ]
        (directory / f"{module.rpartition('.')[2]}.txt").write_text(
            "\n".join(blocks), encoding="utf-8"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--diffs", type=Path, help="write each module's survivors' diffs here")
    arguments = parser.parse_args()

    rows: list[tuple[str, int, int, int]] = []
    survivors: dict[str, list[tuple[str, str]]] = {}
    unfinished = 0
    for meta in meta_files():
        module = ".".join(source_of(meta).with_suffix("").parts)
        exit_codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        killed = total = 0
        for name, exit_code in sorted(exit_codes.items(), key=lambda item: in_order(item[0])):
            status = status_by_exit_code[exit_code]
            if status in KILLED:
                killed += 1
            elif status in SURVIVED:
                survivors.setdefault(module, []).append((name, status))
            else:
                unfinished += 1
                continue
            total += 1
        rows.append((module, killed, total, total - killed))

    if not rows:
        print("mutmut has no results: run `mutmut run` first (make mutate does)")
        return 1

    width = max(len(module) for module, *_ in rows)
    print(f"{'module':<{width}}  killed  total  score  survivors")
    for module, killed, total, survived in rows:
        score = f"{100 * killed / total:.1f}" if total else "-"
        print(f"{module:<{width}}  {killed:>6}  {total:>5}  {score:>5}  {survived:>9}")

    lines: list[str] = []
    for module, names in survivors.items():
        lines.append(f"## {module} ({len(names)})")
        lines.extend(f"{name}: {status}" for name, status in names)
        lines.append("")
    (MUTANTS / "survivors.txt").write_text("\n".join(lines), encoding="utf-8")
    print(f"survivors listed in {MUTANTS / 'survivors.txt'}; `mutmut show <name>` for a diff")
    if arguments.diffs is not None:
        write_diffs(arguments.diffs, survivors)
        print(f"survivors' diffs written to {arguments.diffs}/<module>.txt")
    if unfinished:
        print(f"not checked: {unfinished} mutants (an unfinished run), left out of the score")

    killed = sum(row[1] for row in rows)
    total = sum(row[2] for row in rows)
    print(f"mutation score {100 * killed / total if total else 100.0:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
