"""Output folders you can trust (issue 22): complete or absent, checked when reused, one writer
at a time.

- A result folder (a run's, a sweep job's, an experiment's) is written under a temporary name
  beside its place (`.NAME.partial-<random>`) and renamed into place last, so a folder that is
  there is whole: an interrupt, a crash or a full disk leaves at most a partial folder, which
  the next writer removes.
- Its last file is `manifest.json`: every other file's name, size and SHA-256, the aqmlab
  version and what the folder holds (the scenario's hash, or the experiment). `verify` checks a
  folder against it; a sweep or `reproduce --all` that resumes runs again what fails the check.
- One writer per output folder: `locked(folder)` holds `.NAME.lock` beside it, a file with the
  owner's pid locked with flock(2). A second writer gets `FolderBusy` naming that pid (or waits
  for it); the kernel drops the lock of a process that dies, so the next writer takes over what
  it left.
- `claim` checks an output path before any work starts: not a file, creatable, and not holding
  another run's results (unless `force`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ._core import __version__

MANIFEST = "manifest.json"
# `verify`'s reason for a result not written yet (any other reason is damage).
NO_RESULTS = "no results"
# JSON files aqmlab reads back (manifests, summaries, rows) are small; a larger one is not ours.
MAX_JSON_BYTES = 64 * 2**20
# Files that mark a folder as an aqmlab output (what `--force` may replace).
OUTPUT_MARKERS = (MANIFEST, "summary.json", "rows.json", "sweep.json")

Say = Callable[[str], None]


class OutputError(ValueError):
    """An output path that cannot be used: the message names it and says what to do."""


class FolderBusy(OutputError):
    """Another process is writing the folder."""


# ---------------------------------------------------------------- reading


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of `path`, refusing a file larger than `limit` (or endless, as /dev/zero) after
    reading at most `limit + 1` bytes. OSError as open/read raise it."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OutputError(f"{path}: larger than {limit // 2**20} MiB (aqmlab reads at most that)")
    return data


def read_json(path: Path, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON object aqmlab wrote; OutputError naming the file if it is not one or lacks a
    `required` key."""
    try:
        data = json.loads(read_capped(path, MAX_JSON_BYTES))
    except OSError as e:
        raise OutputError(f"{path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise OutputError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise OutputError(f"{path}: nested too deep to be aqmlab's JSON") from None
    if not isinstance(data, dict):
        raise OutputError(f"{path}: expected a JSON object, got {type(data).__name__}")
    missing = [key for key in required if key not in data]
    if missing:
        raise OutputError(f"{path}: no {', '.join(missing)} (not written by this aqmlab, or edited)")
    return data


# ---------------------------------------------------------------- manifests


def sha256_of(path: Path) -> str:
    import hashlib  # here, not at the top: OpenSSL takes milliseconds to load (issue 21)

    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(2**20):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(folder: Path, about: Mapping[str, Any]) -> Path:
    """Writes `folder/manifest.json`: the aqmlab version, `about` (what the folder holds) and each
    other file under `folder` with its size and SHA-256."""
    files = {
        path.relative_to(folder).as_posix(): {"bytes": path.stat().st_size, "sha256": sha256_of(path)}
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }
    path = folder / MANIFEST
    path.write_text(json.dumps({"aqmlab": __version__, **about, "files": files}, indent=2) + "\n")
    return path


def verify(folder: Path) -> str | None:
    """Why `folder` is not the whole result its manifest lists (None when it is): no folder, no
    manifest, or a file missing, of another size or another checksum. Files added since (a
    report) do not count."""
    if not folder.is_dir():
        return NO_RESULTS
    if not (folder / MANIFEST).is_file():
        return f"no {MANIFEST} (cut short, or written before manifests)"
    try:
        files = read_json(folder / MANIFEST, required=("files",))["files"]
        for name, expected in files.items():
            path = folder / name
            if not path.is_file():
                return f"{name} is missing"
            size = path.stat().st_size
            if size != expected["bytes"]:
                return f"{name} has {size} bytes, the manifest says {expected['bytes']}"
            if sha256_of(path) != expected["sha256"]:
                return f"{name} differs from its checksum in the manifest"
    except OutputError as e:
        return str(e)
    except (OSError, KeyError, TypeError, AttributeError) as e:
        return f"{MANIFEST} unreadable ({type(e).__name__}: {e})"
    return None


def manifest_about(folder: Path) -> dict[str, Any] | None:
    """What a folder's manifest says it holds (without the file list); None without one."""
    try:
        about = read_json(folder / MANIFEST)
    except OutputError:
        return None
    about.pop("files", None)
    return about


# ---------------------------------------------------------------- writing


def _partial_name(final: Path) -> Path:
    return final.with_name(f".{final.name}.partial-{os.urandom(6).hex()}")


def _remove_tree(folder: Path) -> None:
    """Removes `folder` and what it holds, as far as it can. shutil (3 ms) is imported here:
    `aqmlab run FILE --json` reads its scenario through this module (start-up, issue 15)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def remove_partials(folder: Path, name: str = "*") -> None:
    """Removes what writers cut short left in `folder` (of its entry `name`; of all by default):
    call it holding the lock that covers them."""
    for stale in folder.glob(f".{name}.partial-*"):
        if stale.is_dir():
            _remove_tree(stale)
        else:
            stale.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_folder(final: Path, about: Mapping[str, Any]) -> Iterator[Path]:
    """Yields a new, empty temporary folder beside `final` to write a result into; when the block
    ends, writes the manifest (`about` and every file) and renames the folder to `final`,
    replacing what was there. If the block raises (Ctrl-C included), the temporary folder is
    removed and `final` is left as it was."""
    partial = _partial_name(final)
    partial.mkdir(parents=True)
    try:
        yield partial
        write_manifest(partial, about)
        _rename_over(partial, final)
    except BaseException:
        _remove_tree(partial)
        raise


def _rename_over(source: Path, final: Path) -> None:
    """Renames folder `source` to `final`, moving an existing `final` aside first (rename(2) only
    replaces an empty folder). Two writers of one result (Dask may run a task twice) both end
    with a whole `final`."""
    for _ in range(8):
        try:
            os.rename(source, final)
            return
        except OSError:
            if not final.exists():
                raise
        old = _partial_name(final)
        with contextlib.suppress(FileNotFoundError):  # the other writer moved it first
            os.rename(final, old)
        _remove_tree(old)
    raise OSError(f"{final}: could not be replaced (another writer keeps recreating it)")


@contextlib.contextmanager
def replaced_file(path: Path) -> Iterator[Path]:
    """Yields a temporary path beside `path` to write a file to; renames it to `path` when the
    block ends (removes it if the block raises), so `path` is never half written."""
    partial = _partial_name(path)
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> Path:
    """Writes `text` to `path` whole or not at all."""
    with replaced_file(path) as partial:
        partial.write_text(text)
    return path


# ---------------------------------------------------------------- one writer per folder

# Locks this process holds (a path → how many nested `locked` blocks hold it): a CLI command
# takes the lock before checking, and the library call inside takes it again.
_held: dict[Path, int] = {}


def lock_path(folder: Path) -> Path:
    """The lock file of an output folder: beside it, since the folder itself may be replaced."""
    return folder.parent / f".{folder.name}.lock"


@contextlib.contextmanager
def locked(folder: str | Path, wait: bool = False, say: Say | None = None) -> Iterator[None]:
    """Holds the lock of output folder `folder` (creating its parent folders) within the block.

    If another process holds it: `FolderBusy` naming its pid, or with `wait` waits for it (saying
    so through `say`). A lock left by a process that ended without releasing it is taken over
    (said through `say`). OutputError if the parent folder cannot be created or written."""
    folder = Path(folder).resolve()
    if folder in _held:
        _held[folder] += 1
        try:
            yield
        finally:
            _held[folder] -= 1
        return
    path = lock_path(folder)
    if folder.parent.exists() and not folder.parent.is_dir():
        raise OutputError(f"{folder}: {folder.parent} is not a folder")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(path, folder, wait, say or (lambda _: None))
    except OSError as e:
        raise OutputError(f"{folder}: cannot write in {folder.parent} ({e.strerror or e})") from None
    _held[folder] = 1
    try:
        yield
    finally:
        del _held[folder]
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def _acquire(path: Path, folder: Path, wait: bool, say: Say) -> int:
    """Locks the file at `path` and writes our pid into it; returns its descriptor."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _owner_text(_read_owner(fd))
            if not wait:
                os.close(fd)
                raise FolderBusy(
                    f"{folder}: another aqmlab ({owner}) is writing to this folder; "
                    "wait for it to finish, or pass --wait"
                ) from None
            say(f"waiting for {owner} to finish writing {folder}")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        # The previous owner removes the file as it releases it: a lock on a removed file is no lock.
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        previous = _read_owner(fd)
        if previous and previous.get("pid") != os.getpid():
            say(f"took over the lock of {folder} left by {_owner_text(previous)}, which ended without releasing it")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": os.uname().nodename}).encode(), 0)
        return fd


def _read_owner(fd: int) -> dict[str, Any]:
    try:
        owner = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return owner if isinstance(owner, dict) else {}


def _owner_text(owner: Mapping[str, Any]) -> str:
    if not owner:
        return "a process"
    host = owner.get("host")
    on = f" on {host}" if host and host != os.uname().nodename else ""
    return f"pid {owner.get('pid')}{on}"


# ---------------------------------------------------------------- checks before the work


def check_folder_path(folder: Path) -> None:
    """OutputError unless `folder` is a folder or can become one (checked before any work:
    issue 22, item 6)."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{folder}: cannot create it ({e.strerror or e})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{folder}: cannot write to it")


def claim(folder: Path, about: Mapping[str, Any], force: bool = False) -> None:
    """Checks, before any work, that a result described by `about` may replace what `folder`
    holds: nothing, an empty folder, a result with the same `about`, or (with `force`) any
    aqmlab output. OutputError otherwise, naming what is there."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: exists and is not a folder")
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    held = manifest_about(folder)
    if held is not None and all(held.get(key) == value for key, value in about.items()):
        return
    is_output = any((folder / name).is_file() for name in OUTPUT_MARKERS)
    if not is_output:
        raise OutputError(f"{folder}: not empty and not an aqmlab output folder; choose a new or empty folder")
    if force:
        return
    what = _describe(held) if held is not None else "result written before manifests, or damaged"
    raise OutputError(
        f"{folder}: holds the results of another {what}; choose another folder, or pass --force to replace them"
    )


def _describe(about: Mapping[str, Any]) -> str:
    """`run of cbr-overload (scenario 1a2b3c4d5e6f)`, `experiment demo`: what a manifest says."""
    name = about.get("name") or about.get("experiment")
    scenario = about.get("scenario_sha256")
    return (
        str(about.get("kind", "result"))
        + (f" of {name}" if about.get("kind") == "run" and name else f" {name}" if name else "")
        + (f" (scenario {str(scenario)[:12]})" if scenario else "")
    )


@contextlib.contextmanager
def result_folder(
    folder: Path, about: Mapping[str, Any], force: bool = False, wait: bool = False, say: Say | None = None
) -> Iterator[Path]:
    """Everything `aqmlab run --out` and `reproduce ID --out` need, entered before the work starts:
    the folder's lock, the `claim` check, and an `atomic_folder` to write into (yielded)."""
    with locked(folder, wait, say):
        claim(folder, about, force)
        remove_partials(folder.parent, folder.name)
        with atomic_folder(folder, about) as partial:
            yield partial
