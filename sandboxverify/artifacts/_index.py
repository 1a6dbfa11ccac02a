"""Releases on a package index, and their files fetched as they are: a survey checks each
plugin from its published sdist (its wheel when it has none), so the file must be fetched
without an installer, which would build an sdist to read its metadata, outside any sandbox.

The index speaks the Simple API (PEP 691 JSON, or PEP 503 HTML); ``--find-links`` locations are
directories or pages of links. A project found under a find-links location is taken from there
alone (the index is not asked for it): a survey of local builds never reaches past them.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import json
import os
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, sys_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from sandboxverify._frozen import frozen

PYPI = "https://pypi.org/simple"
_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.2"
_SDIST_SUFFIXES = (".tar.gz", ".zip")
_READ_TIMEOUT = 60.0

FileKind = Literal["sdist", "wheel"]


class FetchError(Exception):
    """A release or its file could not be found or fetched; the message says which and why."""


@frozen
class IndexFile:
    """One file of a release, as the index lists it."""

    filename: str
    url: str
    kind: FileKind
    version: Version
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False
    tags: frozenset[Tag] = frozenset()

    def fits(self, python: Version) -> bool:
        """Installable on ``python`` as far as ``Requires-Python`` and the wheel's tags say."""
        if self.requires_python:
            try:
                if python not in SpecifierSet(self.requires_python):
                    return False
            except ValueError:
                return False
        return self.kind == "sdist" or bool(self.tags & _our_tags())


def _our_tags() -> frozenset[Tag]:
    return frozenset(sys_tags())


def index_url_from_environment() -> str:
    """The index the installers use unless told: uv's and pip's settings, else PyPI."""
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return PYPI


class PackageIndex:
    """The files of projects on one index and some find-links locations; asked once per
    project (thread-safe: a survey's workers share it)."""

    def __init__(self, index_url: str | None, find_links: Sequence[str] = ()) -> None:
        self.index_url = (index_url or index_url_from_environment()).rstrip("/") + "/"
        self.find_links = tuple(find_links)
        self._lock = threading.Lock()
        self._files: dict[str, list[IndexFile]] = {}
        self._links: list[tuple[str, str | None]] | None = None

    def files(self, name: str) -> list[IndexFile]:
        """Every file of project ``name`` (under find-links when any is there, else on the
        index); raises :class:`FetchError` when the index cannot be read."""
        key = canonicalize_name(name)
        with self._lock:
            if key not in self._files:
                local = [f for f in self._from_links() if _project_of(f.filename) == key]
                self._files[key] = local or self._from_index(key)
            return list(self._files[key])

    def releases(self, requirement: Requirement, python: Version) -> list[Version]:
        """The versions ``requirement`` allows that have a file for ``python``, newest first
        (pre-releases only where the requirement names one or nothing else matches; a yanked
        release only when pinned with ``==``)."""
        files = [f for f in self.files(requirement.name) if f.fits(python)]
        pinned = any(spec.operator in ("==", "===") for spec in requirement.specifier)
        usable = {f.version for f in files if pinned or not f.yanked}
        return sorted(requirement.specifier.filter(usable), reverse=True)

    def choose(self, requirement: Requirement, python: Version) -> IndexFile:
        """The file a survey checks: the newest allowed release's sdist, or its wheel for
        ``python`` when it has no sdist."""
        versions = self.releases(requirement, python)
        if not versions:
            where = self._where(requirement.name)
            raise FetchError(f"no release of {requirement} for Python {python} {where}")
        files = [
            f for f in self.files(requirement.name) if f.version == versions[0] and f.fits(python)
        ]
        sdists = [f for f in files if f.kind == "sdist"]
        if sdists:
            return sorted(sdists, key=lambda f: not f.filename.endswith(".tar.gz"))[0]
        order = {tag: rank for rank, tag in enumerate(sys_tags())}
        return min(files, key=lambda f: min(order.get(t, len(order)) for t in f.tags))

    def has_wheel(self, name: str, version: Version, python: Version) -> bool:
        return any(
            f.kind == "wheel" and f.version == version and f.fits(python) for f in self.files(name)
        )

    def download(self, file: IndexFile, cache: Path) -> Path:
        """``file`` on disk: a local one where it is, else fetched into ``cache`` (kept by its
        sha256 and reused), its sha256 checked against the index's."""
        parsed = urllib.parse.urlsplit(file.url)
        if parsed.scheme == "file" or not parsed.scheme:
            path = (
                Path(urllib.request.url2pathname(parsed.path)) if parsed.scheme else Path(file.url)
            )
            if not path.is_file():
                raise FetchError(f"{file.filename}: {path} does not exist")
            _verify(path, file)
            return path
        target = cache / (file.sha256 or _url_digest(file.url)) / file.filename
        if target.is_file() and (file.sha256 is None or _sha256(target) == file.sha256):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            with _open(file.url) as response, partial.open("wb") as out:
                shutil.copyfileobj(response, out)
            _verify(partial, file)
            os.replace(partial, target)
        except (OSError, urllib.error.URLError) as exc:
            raise FetchError(f"cannot download {file.filename}: {_reason(exc)}") from None
        finally:
            partial.unlink(missing_ok=True)
        return target

    def _where(self, name: str) -> str:
        if any(_project_of(f.filename) == canonicalize_name(name) for f in self._from_links()):
            return "under --find-links " + " ".join(self.find_links)
        return f"on {_shown(self.index_url)}"

    def _from_index(self, name: str) -> list[IndexFile]:
        url = urllib.parse.urljoin(self.index_url, f"{name}/")
        try:
            with _open(url, accept=_ACCEPT) as response:
                body = response.read()
                kind = response.headers.get("Content-Type", "")
                page = response.geturl()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise FetchError(f"cannot read {_shown(url)}: {_reason(exc)}") from None
        except (OSError, urllib.error.URLError) as exc:
            if _is_missing_local(url):
                return []
            raise FetchError(f"cannot read {_shown(url)}: {_reason(exc)}") from None
        if "json" in kind:
            return _json_files(json.loads(body), page)
        return _html_files(body.decode("utf-8", "replace"), page)

    def _from_links(self) -> list[IndexFile]:
        if self._links is None:
            self._links = [link for location in self.find_links for link in _links_of(location)]
        return [f for f in map(_file_from_link, self._links) if f is not None]


def _links_of(location: str) -> list[tuple[str, str | None]]:
    """``(url, requires_python)`` of every file a find-links location offers."""
    parsed = urllib.parse.urlsplit(location)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.request.url2pathname(parsed.path) if parsed.scheme else location)
        if path.is_dir():
            return [(child.absolute().as_uri(), None) for child in sorted(path.iterdir())]
        return [(path.absolute().as_uri(), None)] if path.is_file() else []
    try:
        with _open(location) as response:
            body, page = response.read().decode("utf-8", "replace"), response.geturl()
    except (OSError, urllib.error.URLError) as exc:
        raise FetchError(f"cannot read --find-links {_shown(location)}: {_reason(exc)}") from None
    return [(f.url, f.requires_python) for f in _html_files(body, page)]


def _file_from_link(link: tuple[str, str | None], *, yanked: bool = False) -> IndexFile | None:
    url, requires_python = link
    filename = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
    fragment = urllib.parse.urlsplit(url).fragment
    sha256 = fragment[len("sha256=") :] if fragment.startswith("sha256=") else None
    return _described(filename, url.split("#", 1)[0], sha256, requires_python, yanked=yanked)


def _json_files(document: dict[str, Any], page: str) -> list[IndexFile]:
    found = []
    for entry in document.get("files", []):
        hashes = entry.get("hashes") or {}
        described = _described(
            str(entry.get("filename", "")),
            urllib.parse.urljoin(page, str(entry.get("url", ""))),
            hashes.get("sha256"),
            entry.get("requires-python"),
            yanked=bool(entry.get("yanked")),
        )
        if described is not None:
            found.append(described)
    return found


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.anchors.append(dict(attrs))


def _html_files(body: str, page: str) -> list[IndexFile]:
    parser = _Anchors()
    parser.feed(body)
    found = []
    for anchor in parser.anchors:
        href = anchor.get("href")
        if not href:
            continue
        url = urllib.parse.urljoin(page, href)
        link = (url, anchor.get("data-requires-python"))
        described = _file_from_link(link, yanked="data-yanked" in anchor)
        if described is not None:
            found.append(described)
    return found


def _described(
    filename: str, url: str, sha256: str | None, requires_python: str | None, *, yanked: bool
) -> IndexFile | None:
    """The file, when its name is a wheel's or an sdist's (anything else is not offered)."""
    try:
        if filename.endswith(".whl"):
            _, version, _, tags = parse_wheel_filename(filename)
            kind: FileKind = "wheel"
        elif filename.endswith(_SDIST_SUFFIXES):
            stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else filename[:-4]
            _, version = parse_sdist_filename(stem + ".tar.gz")
            tags, kind = frozenset(), "sdist"
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return IndexFile(
        filename, url, kind, version, sha256, requires_python or None, yanked, frozenset(tags)
    )


def _project_of(filename: str) -> str | None:
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        if filename.endswith(_SDIST_SUFFIXES):
            stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else filename[:-4]
            return str(parse_sdist_filename(stem + ".tar.gz")[0])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return None


def _open(url: str, *, accept: str | None = None) -> Any:
    """``url`` opened, credentials in it sent as HTTP basic auth (never in the URL)."""
    parsed = urllib.parse.urlsplit(url)
    headers = {"User-Agent": "sandboxverify-survey"}
    if accept:
        headers["Accept"] = accept
    if parsed.username is not None:
        user = urllib.parse.unquote(parsed.username)
        token = f"{user}:{urllib.parse.unquote(parsed.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        host = parsed.hostname or ""
        netloc = f"{host}:{parsed.port}" if parsed.port else host
        url = urllib.parse.urlunsplit(parsed._replace(netloc=netloc))
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        if path.is_dir():  # a directory laid out as a simple index: its page
            url = (path / "index.html").as_uri()
    return urllib.request.urlopen(
        urllib.request.Request(url, headers=headers), timeout=_READ_TIMEOUT
    )


def _is_missing_local(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    return parsed.scheme == "file" and not Path(urllib.request.url2pathname(parsed.path)).exists()


def _verify(path: Path, file: IndexFile) -> None:
    if file.sha256 is not None and _sha256(path) != file.sha256.lower():
        raise FetchError(f"{file.filename}: its sha256 is not the one the index lists")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _url_digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _shown(url: str) -> str:
    """A URL as messages show it: without credentials."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.username is None:
        return url
    host = parsed.hostname or ""
    return urllib.parse.urlunsplit(parsed._replace(netloc=f"***@{host}"))


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason if reason is not None else exc)
