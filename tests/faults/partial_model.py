"""Fault-matrix rows for a start killed while assembling the offline model, and a models folder
that cannot be written (issue 39, item 11).

The model's file is the real one, assembled by `jarvis-tui --local` from the installed parts
(491 MB, about 2 s). Only the server that would load it is a stand-in: a `llama_cpp.server` put
first on PYTHONPATH that checks the file it is given and answers as tests.fakeserver does, since
what is under test ends before a model is loaded.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from jarvis_tui.core.providers.local_model import MODEL
from tests.faults import ProcCase, ProcOutcome, Trial, one_line, wait_for
from tests.readonly import read_only

ROOT = Path(__file__).resolve().parents[2]
SERVER = f"""
import argparse, os
from tests.fakeserver import FakeProvider
args = argparse.ArgumentParser()
for flag in ("--model", "--host", "--chat_format"):
    args.add_argument(flag)
for flag in ("--n_ctx", "--port"):
    args.add_argument(flag, type=int)
args = args.parse_args()
if os.path.getsize(args.model) != {MODEL.size}:
    raise SystemExit(f"{{args.model}} is not the whole model")
FakeProvider(args.n_ctx, "llama_cpp_python", host=args.host, port=args.port).start() \\
    .run_until_interrupted("a stand-in for llama_cpp.server")
"""
KILL_AT = 64 << 20  # bytes of the copy written when the first start is killed


def with_stand_in_server(t: Trial) -> Path:
    """The trial's environment with the stand-in server; the folder the model is cached in."""
    package = t.tmp / "stand-in" / "llama_cpp"
    (package / "server").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "server" / "__init__.py").write_text("")
    (package / "server" / "__main__.py").write_text(SERVER)
    t.env["PYTHONPATH"] = os.pathsep.join([str(package.parent), str(ROOT)])
    return Path(t.env["XDG_CACHE_HOME"]) / "jarvis-tui" / "models"


def copies(models: Path) -> list[Path]:
    return sorted(models.glob("*.partial")) if models.is_dir() else []


def killed_while_assembling(tmp: Path) -> ProcOutcome:
    t = Trial(11, "a start killed while assembling the offline model", tmp, issue=39)
    models = with_stand_in_server(t)
    first = t.start("--local", "ask", "first try")
    grew = wait_for(lambda: any(p.stat().st_size >= KILL_AT for p in copies(models)), 60)
    first.send_signal(signal.SIGKILL)
    t.finish(first)
    left = copies(models)
    if not t.expect(grew and left, "the first start left no copy to clean (killed too late?)"):
        (models / MODEL.file).unlink(missing_ok=True)
        return t.outcome()
    size = sum(p.stat().st_size for p in left)
    again = t.run("--local", "ask", "second try", timeout=120)
    t.expect(again.returncode == 0, f"the next start: exit {again.returncode}: "
                                    f"{one_line(again.stderr)}")
    t.expect(not copies(models), f"the killed start's {size >> 20} MB copy is still there: "
                                 f"{[p.name for p in copies(models)]}")
    target = models / MODEL.file
    t.expect(target.is_file() and target.stat().st_size == MODEL.size,
             "the model was not assembled whole")
    freed = [line for line in again.stderr.splitlines() if "unfinished copy" in line]
    t.expect(freed == [f"jarvis-tui: removed an unfinished copy of the local model's file that a "
                       f"stopped start left in {models} ({size / 2**20:,.0f} MB freed)"],
             f"not told once what was freed: {freed or one_line(again.stderr)!r}")
    t.expect("Reply 1: second try" in again.stdout, f"no reply: {again.stdout[:60]!r}")
    third = t.run("--local", "ask", "third try", timeout=120)
    t.expect(third.returncode == 0 and "unfinished" not in third.stderr,
             f"the start after: exit {third.returncode}, {one_line(third.stderr)!r}")
    t.keeps(["second try", "third try"])
    target.unlink(missing_ok=True)  # pytest keeps the last runs' folders: not 491 MB each
    return t.outcome(freed[0] if freed else "")


def models_folder_not_writable(tmp: Path) -> ProcOutcome:
    t = Trial(11, "a models folder that cannot be written", tmp, issue=39)
    models = with_stand_in_server(t)
    models.mkdir(parents=True)
    # A read-only mount (in a namespace of the command's own), then a folder root may not write.
    mounted = t.shell(f'mount --bind "{models}" "{models}" && '
                      f'mount -o remount,bind,ro "{models}" || exit 99\n'
                      '$JARVIS --local ask "on a read-only mount"', timeout=120, namespace=True)
    with read_only(models):
        denied = t.run("--local", "ask", "in a locked folder", timeout=120)
    for proc, reason, fix in ((mounted, "read-only file system", "remount it read-write"),
                              (denied, "permission denied", "check the folder's owner and mode")):
        said = proc.stderr.strip().splitlines()
        t.expect(proc.returncode == 1, f"{reason}: exit {proc.returncode}")
        t.expect(said and said[-1].startswith(
            f"jarvis-tui: cannot write the local model's file to {models}: {reason}; {fix}"),
            f"{reason}: said {one_line(proc.stderr)!r}")
        t.expect(not any("free there" in line for line in said), f"{reason}: blamed free space")
    t.expect(not copies(models), "an unfinished copy was left")
    return t.outcome(one_line(mounted.stderr))


CASES: list[ProcCase] = [
    ProcCase(11, "a start killed while assembling the offline model", killed_while_assembling,
             issue=39),
    ProcCase(11, "a models folder that cannot be written", models_folder_not_writable, issue=39),
]
