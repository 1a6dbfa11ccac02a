"""Static rules a wheel must satisfy before it is installed anywhere: RECORD matches the
archive, the wheel ships importable code and no top-level ``tests`` (nor ``sandboxverify``, unless
it is sandboxverify), expected files are there."""

from __future__ import annotations

import base64
import csv
import difflib
import hashlib
import io
import re
import zipfile
from collections.abc import Sequence
from fnmatch import fnmatchcase

from packaging.utils import canonicalize_name

from sandboxverify._frozen import frozen
from sandboxverify.artifacts._findings import Severity, rule_named
from sandboxverify.report import FailureCode
from sandboxverify.runtime import EntryPointRef


@frozen
class Problem:
    """One thing wrong with an artifact: the message names the artifact, the hint says what to
    change in the build configuration."""

    message: str
    hint: str
    #: the artifact is still installed and its plugins loaded, so the report also says whether
    #: they work (a stray ``tests`` package breaks no plugin); the check fails all the same
    installable: bool = False
    #: the static rule that found it (``_findings.RULES``), when one did
    rule: str | None = None
    #: the file it is about: the artifact's name, or ``pyproject.toml``
    file: str | None = None
    #: found in a file given as it is (perhaps published already), not one about to be
    given: bool = False

    @property
    def severity(self) -> Severity:
        """``warning``: hygiene, reported and passed unless promoted (``--fail-on-warning``);
        also an upload refusal in a given file, whose users meet nothing of it."""
        if self.rule is None:
            return "error"
        rule = rule_named(self.rule)
        return "warning" if self.given and rule.upload else rule.severity

    @property
    def code(self) -> FailureCode:
        """The failure code it fails with."""
        return rule_named(self.rule).failure if self.rule else "artifact_invalid"


REBUILD_HINT = (
    "rebuild the artifact with its build backend (python -m build, uv build) instead of "
    "assembling or editing the archive by hand"
)
_RECORD_HINT = (
    "the wheel was changed after its build backend wrote RECORD (a post-build step added, "
    "edited or removed files): rebuild it, or have that step rewrite RECORD "
    "(wheel unpack, then wheel pack)"
)
_NO_CODE_HINT = (
    "tell the build backend where the code is: e.g. hatchling [tool.hatch.build.targets.wheel] "
    'packages = ["src/yourpkg"], setuptools [tool.setuptools.packages.find] where = ["src"]'
)
_EXPECT_FILES_HINT = (
    "include the files in the wheel, e.g. as package data (setuptools: "
    "[tool.setuptools.package-data], or include-package-data with MANIFEST.in; hatchling: "
    "keep them inside the package or list them in [tool.hatch.build] include/artifacts); "
    "the wheel is built from the sdist, so the sdist needs them too. Globs are matched "
    "against paths inside the wheel, e.g. yourpkg/data/*.json"
)
_STRONG_HASHES = frozenset({"sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512"})
#: files that are importable modules
_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
#: files that make a wheel code, not data (stubs count: a stubs-only wheel is real)
_CODE_SUFFIXES = (*_MODULE_SUFFIXES, ".pyi")


def record_problems(
    filename: str, archive: zipfile.ZipFile, info: str, record_data: bytes, files: Sequence[str]
) -> list[Problem]:
    """RECORD (``record_data``, read within the metadata size limit) lists every file with its
    sha256 and size, and nothing else (checked statically: installers that trust it would
    install a different file than the one the hash promises)."""
    record = f"{info}/RECORD"
    try:
        rows = list(csv.reader(io.StringIO(record_data.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        return [Problem(f"{filename}: {record} is not a readable CSV file: {exc}", REBUILD_HINT)]
    entries: dict[str, tuple[str, str]] = {}
    malformed: list[str] = []
    for number, row in enumerate(rows, 1):
        if not row:
            continue
        if len(row) != 3:
            malformed.append(f"line {number}")
            continue
        entries.setdefault(row[0], (row[1], row[2]))
    # RECORD cannot hold its own hash, and signatures of RECORD are made after it
    unhashed = {f"{info}/{name}" for name in ("RECORD", "RECORD.jws", "RECORD.p7s")}
    present = set(files)
    unlisted = [f for f in files if f not in entries and f not in unhashed]
    missing = [p for p in entries if p not in present and not p.endswith("/")]
    differ: list[str] = []
    weak: list[str] = []
    for member, (hash_value, size) in entries.items():
        if member not in present or member in unhashed:
            continue
        algorithm, _, expected = hash_value.partition("=")
        if algorithm not in _STRONG_HASHES or not expected:
            weak.append(f"{member} ({hash_value or 'no hash'})")
        elif _digest(archive, member, algorithm) != expected.rstrip("=") or (
            size and size != str(archive.getinfo(member).file_size)
        ):
            differ.append(member)
    problems: list[Problem] = []
    for found, what in (
        (malformed, f"{record} has {{n}} malformed line(s) (not path,hash,size)"),
        (unlisted, f"{{n}} file(s) in the archive are not listed in {record}"),
        (missing, f"{record} lists {{n}} file(s) the archive does not contain"),
        (differ, f"{{n}} file(s) do not match the sha256 hash or size {record} gives"),
        (weak, f"{record} gives no sha256 (or stronger) hash for {{n}} file(s)"),
    ):
        if found:
            message = f"{filename}: {what.format(n=len(found))}: {few(found)}"
            problems.append(Problem(message, _RECORD_HINT))
    return problems


def _digest(archive: zipfile.ZipFile, member: str, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with archive.open(member) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")


_UNSAFE_HINT = (
    "nothing was unpacked or installed; rebuild the artifact with its build backend "
    "(python -m build, uv build), and never install an archive like this one"
)
#: unsafe members named one by one, then counted
_UNSAFE_SHOWN = 5


def unsafe_problems(filename: str, reasons: Sequence[str]) -> list[Problem]:
    """An archive refused before anything reads or unpacks it further, one problem per reason."""
    problems = [Problem(f"{filename}: {reason}", _UNSAFE_HINT) for reason in reasons]
    if len(problems) <= _UNSAFE_SHOWN:
        return problems
    more = len(problems) - _UNSAFE_SHOWN
    return [
        *problems[:_UNSAFE_SHOWN],
        Problem(f"{filename}: {more} more unsafe member(s)", _UNSAFE_HINT),
    ]


def content_problems(filename: str, info: str, files: Sequence[str]) -> list[Problem]:
    """A wheel that installs no code, or installs a top-level ``tests``, is a packaging bug."""
    payload = [f for f in files if f.split("/", 1)[0] != info]
    if not payload:
        return [
            Problem(
                f"{filename}: the wheel is empty: it ships nothing outside {info}",
                _NO_CODE_HINT,
            )
        ]
    problems: list[Problem] = []
    installed = [path for path in map(importable_path, payload) if path is not None]
    editable = editable_problem(filename, installed)
    if editable is not None:
        return [editable]
    if not any(path.endswith(_CODE_SUFFIXES) for path in installed):
        problems.append(
            Problem(
                f"{filename}: the wheel ships no importable module or package, only {few(payload)}",
                _NO_CODE_HINT,
            )
        )
    for clash in sorted(top_level_names(files) & {"tests", "test"}):
        problems.append(
            Problem(
                f"{filename}: the wheel ships a top-level {clash!r} package or module: it "
                f"would be installed as site-packages/{clash} and clash with every other "
                "project that does this",
                f"exclude it from the wheel: e.g. setuptools [tool.setuptools.packages.find] "
                f'exclude = ["{clash}*"], hatchling [tool.hatch.build.targets.wheel] '
                'packages = ["yourpkg"]',
                installable=True,
                # hygiene, not breakage: installers take it and no user import reaches it
                rule="wheel-tests-toplevel",
                file=filename,
            )
        )
    if "sandboxverify" in top_level_names(files) and _distribution(filename) != "sandboxverify":
        problems.append(
            Problem(
                f"{filename}: the wheel ships a top-level 'sandboxverify' package or module: it "
                "would replace sandboxverify wherever both are installed (and in the sandbox "
                "it is never imported in place of sandboxverify's own runtime)",
                "rename it (or move it inside your own package); the name belongs to the "
                "sandboxverify distribution",
                installable=True,
            )
        )
    return problems


def editable_problem(filename: str, installed: Sequence[str]) -> Problem | None:
    """An editable wheel (``pip install -e``, tox ``usedevelop``, nox ``-e .``): what it installs
    points back at a source tree (a ``.pth`` file, an ``__editable__`` finder) instead of
    holding the code, so nobody else can install it."""
    tops = [path for path in installed if "/" not in path]
    finders = [path for path in tops if path.startswith("__editable__")]
    only_paths = (
        bool(tops) and len(tops) == len(installed) and all(p.endswith(".pth") for p in tops)
    )
    if not finders and not only_paths:
        return None
    return Problem(
        f"{filename}: an editable wheel: it points at a source tree ({few(finders or tops)}) "
        "instead of holding the code, so it works nowhere else",
        "verify the sdist or a regular wheel: with tox set usedevelop = false and package = "
        "sdist in the verifying environment (a project-wide usedevelop = true builds editable "
        "wheels); never pass pip install -e's wheel",
        rule="wheel-editable",
        file=filename,
    )


def _distribution(filename: str) -> str:
    """The distribution a wheel's file name says it is, normalized."""
    return canonicalize_name(filename.split("-", 1)[0])


def importable_path(member: str) -> str | None:
    """Where ``member`` lands relative to site-packages, if it lands there as code may:
    ``*.data/purelib`` and ``*.data/platlib`` do, ``*.data/scripts`` (and ``data``, ``headers``)
    and ``*.dist-info`` do not."""
    head, _, rest = member.partition("/")
    if head.endswith(".dist-info"):
        return None
    if head.endswith(".data"):
        scheme, _, inner = rest.partition("/")
        return inner if scheme in ("purelib", "platlib") and inner else None
    return member


def few(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def top_level_names(files: Sequence[str]) -> frozenset[str]:
    """Top-level names the wheel installs into site-packages (packages, modules, extensions)."""
    found: set[str] = set()
    for member in files:
        path = importable_path(member)
        if path is None:
            continue
        head, _, rest = path.partition("/")
        if rest:
            found.add(head)
        elif head.endswith(_MODULE_SUFFIXES):
            found.add(head.split(".", 1)[0])
    return frozenset(found)


def missing_expected_files(
    filename: str, files: Sequence[str], globs: Sequence[str]
) -> list[Problem]:
    """``--expect-files``: each glob must match at least one file (``*`` also crosses ``/``)."""
    problems: list[Problem] = []
    for raw in globs:
        pattern = _normalized_glob(raw)
        # a directory matches when it holds a file: 'pkg/data' and 'pkg/data/' mean 'pkg/data/*'
        if any(fnmatchcase(m, pattern) or fnmatchcase(m, f"{pattern}/*") for m in files):
            continue
        similar = _similar(pattern, files)
        present = f"; similar files in the wheel: {few(similar)}" if similar else ""
        problems.append(
            Problem(
                f"{filename}: no file matches --expect-files {raw!r}{present}",
                _EXPECT_FILES_HINT,
            )
        )
    return problems


def _normalized_glob(glob: str) -> str:
    pattern = glob.strip().replace("\\", "/").lstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/")


def _similar(pattern: str, files: Sequence[str], limit: int = 5) -> list[str]:
    """Files near where the glob points: under its deepest directory the wheel has, the
    closest-looking first."""
    literal = pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
    parts = literal.split("/")[:-1]
    for depth in range(len(parts), -1, -1):
        prefix = "".join(f"{part}/" for part in parts[:depth])
        # metadata files are suggested only when the glob points into the .dist-info
        under = [f for f in files if f.startswith(prefix) and (prefix or ".dist-info/" not in f)]
        if under:
            ranked = sorted(under, key=lambda f: -difflib.SequenceMatcher(None, pattern, f).ratio())
            return ranked[:limit]
    return []


#: what PyPI takes as a console or GUI script's name
_SCRIPT_NAME = re.compile(r"^[\w.-]+$")


def script_name_problems(filename: str, entry_points: Sequence[EntryPointRef]) -> list[Problem]:
    """Console and GUI script names PyPI refuses (they become file names in ``bin/``)."""
    bad = [
        ref.name
        for ref in entry_points
        if ref.group in ("console_scripts", "gui_scripts") and not _SCRIPT_NAME.match(ref.name)
    ]
    if not bad:
        return []
    return [
        Problem(
            f"{filename}: script names PyPI refuses (letters, digits, '_', '.', '-' only): "
            f"{few([repr(name) for name in bad])}",
            "rename them in [project.scripts] / [project.gui-scripts]",
            installable=True,
            rule="entry-point-name",
            file=filename,
        )
    ]
