"""A recording's settings, and the recording written as a playbook: shared by ``record``,
``record --refresh`` (the settings read back from the playbook itself), ``run`` in record mode
and the pytest ``playbook`` fixture.

What is written holds no secret: model options named like secrets are used, never written, and
the text goes through the caller's redactor (one marker, ``***``, as the runtime's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from sandboxverify._errors import UsageError
from sandboxverify._frozen import frozen
from sandboxverify.report import SECRET_NAME, Redactor
from sandboxverify.stages.playbook._document import load_playbook, parse_playbook
from sandboxverify.stages.playbook._writer import Unwritable, render_playbook


@frozen
class RecordingSettings:
    """What a recording asks the model and the plugins, and writes into the playbook."""

    prompts: tuple[str, ...]
    model: str
    plugins: tuple[str, ...] = ()
    dist: str | None = None
    host: str = "native"
    group: str | None = None
    system: str | None = None
    normalize: tuple[str, ...] = ()
    model_options: Mapping[str, str] = field(default_factory=dict)
    max_steps: int = 10
    timeout: float | None = None
    #: environmental tools and UI answers, copied into the recording
    mocked: Mapping[str, Any] = field(default_factory=lambda: {"mock_tools": {}, "mock_ui": {}})
    has_ui: bool = True

    @classmethod
    def of_playbook(cls, path: Path, *, model: str | None = None, **more: Any) -> RecordingSettings:
        """The settings a playbook was recorded with, read back from it (``--refresh``)."""
        spec = load_playbook(path)
        recording = spec.get("recording") or {}
        chosen = model or recording.get("model")
        if not chosen:
            raise UsageError(
                f"{path} names no model to record with ([recording] model = ...)",
                hint="pass --model MODEL",
            )
        return cls(
            prompts=tuple(turn["prompt"] for turn in spec["turns"]),
            model=str(chosen),
            plugins=tuple(spec.get("plugins") or ()),
            host=str(spec.get("host") or "native"),
            system=recording.get("system"),
            normalize=tuple(spec.get("normalize") or ()),
            model_options={str(k): str(v) for k, v in (recording.get("options") or {}).items()},
            mocked={"mock_tools": spec["mock_tools"], "mock_ui": spec["mock_ui"]},
            has_ui=bool(spec.get("has_ui", True)),
            **more,
        )

    def request(self, trace: Path | None, base: Path | None = None) -> dict[str, Any]:
        """What the runtime's ``record`` takes; plugin files are relative to ``base``."""
        plugins = list(self.plugins)
        if base is not None:
            from sandboxverify.runtime.harness import spec_plugins  # noqa: PLC0415

            plugins = spec_plugins({"plugins": plugins, "base": str(base)}) or []
        return {
            "prompts": list(self.prompts),
            "model": self.model,
            "system": self.system,
            "options": dict(self.model_options),
            "max_steps": self.max_steps,
            "plugins": plugins or None,
            "dist": self.dist,
            "group": self.group,
            "host": self.host,
            "run_timeout": self.timeout,
            "trace": str(trace) if trace is not None else None,
            "has_ui": self.has_ui,
            **self.mocked,
        }

    @property
    def kept_options(self) -> dict[str, str]:
        """The model's options that may be written: none named like a secret."""
        return {k: v for k, v in self.model_options.items() if not SECRET_NAME.search(k)}

    def text(self, result: dict[str, Any], path: Path, secrets: Redactor) -> str | None:
        """The recording as a playbook's text (redacted); ``None`` (and the result failed) when
        a model's argument cannot be written as TOML."""
        digests = result.get("digests") or {}
        try:
            text = render_playbook(
                result["recorded"],
                header=_header(path, result),
                top={
                    "host": self.host if self.host != "native" else None,
                    "plugins": list(self.plugins) or None,
                    "normalize": list(self.normalize) or None,
                    "has_ui": None if self.has_ui else False,
                },
                comments=_comments(self.normalize),
                tables={
                    "recording": {
                        "model": result["model"],
                        "system": self.system,
                        "options": self.kept_options,
                        **digests,
                    },
                    "mock_tools": self.mocked["mock_tools"],
                    "mock_ui": self.mocked["mock_ui"],
                },
                normalize=self.normalize,
                source=str(path),
            )
        except Unwritable as exc:  # a model's argument TOML and JSON cannot hold
            result.update(ok=False, error={"code": "unwritable", "message": str(exc)})
            return None
        redacted = secrets.text(text)
        if redacted != text:
            parse_playbook(redacted, str(path))  # still a playbook
        return redacted


def _header(path: Path, result: dict[str, Any]) -> list[str]:
    return [
        f"Recorded by 'sandboxverify record' with the model {result['model']!r}: "
        f"{result.get('turns', 0)} turn(s), {result.get('tool_calls', 0)} tool call(s) by "
        f"{', '.join(result.get('plugins') or []) or 'no plugin'}.",
        "Every model step is an action; the plugins' tools ran for real, result = what they "
        "returned (ids masked as <id-N>).",
        *_where(result),
        *next_steps(path),
    ]


def _where(result: dict[str, Any]) -> list[str]:
    sandbox = result.get("sandbox")
    if not sandbox:
        return []
    return [f"The plugins came from {sandbox['wheel']}, in a sandbox (Python {sandbox['python']})."]


def next_steps(path: Path) -> list[str]:
    return [
        f"replay, results compared:       sandboxverify run {path.name}",
        f"record it again:                sandboxverify record --refresh {path.name}",
        f"does the model still agree?     sandboxverify run {path.name} --live",
    ]


def _comments(normalize: Sequence[str]) -> list[str]:
    """Settings a replay may change, commented out."""
    lines = ["compare_results = false   # replay without comparing results with 'result'"]
    if normalize:
        return lines
    return [*lines, "normalize = ['ID-[0-9a-f]+']   # ids masked (<id-1>) before results compare"]
