"""What each of llm's registration hooks registers, as registrations with a kind.

One collector per hook call: the arguments the hook receives, built like llm builds them, and what
the plugin registered through them. ``register_tools`` (kind ``tool``) puts its tools in the
registry, to be called by smoke runs; every other kind is only reported:

- ``register_models(register, model_aliases)``: ``register(model, async_model=None,
  aliases=None)`` as in ``llm.get_models_with_aliases()``; kind ``model``, named by ``model_id``,
  its options' JSON Schema as parameters; ``model_aliases`` holds what llm's default plugins
  register, and a model of theirs the plugin changes (an async model added) is reported too;
- ``register_embedding_models(register)``: ``register(model, aliases=None)``; kind
  ``embedding_model``;
- ``register_template_loaders(register)``, ``register_fragment_loaders(register)``:
  ``register(prefix, loader)`` as in llm's ``_get_loaders()`` (a prefix registered twice gets a
  ``_1`` suffix); kinds ``template_loader``, ``fragment_loader``, named by prefix;
- ``register_commands(cli)``: a copy of llm's own ``cli`` group (so a plugin may extend one of
  llm's groups); kind ``command``, each command added (``name``, or ``group name`` for one added
  to an existing group), and each of llm's own commands it changes in place (options added or
  removed, its callback replaced);
- a hook this module does not know (a newer llm's): with a lone ``register`` argument, each call
  of it registers one object of kind ``<hook without register_, singular>``; otherwise it cannot
  be called and the hook itself is reported, kind ``hook``.

What llm would reject later (a model without a ``model_id``, a loader that is not callable) is a
``TypeError`` raised in ``register``, inside the plugin's hook, where llm's would be.
"""

from __future__ import annotations

import copy
import importlib
import json
from typing import Any

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.runtime._registrations import Registry
from sandboxverify.runtime.hosts._base import summary
from sandboxverify.runtime.hosts._llm_tools import tool_specs

Registration = dict[str, Any]

#: the order hooks are called and reported in; hooks not listed follow, by name
HOOK_ORDER = (
    "register_tools",
    "register_models",
    "register_embedding_models",
    "register_template_loaders",
    "register_fragment_loaders",
    "register_commands",
)


class Collector:
    """The arguments of one hook, and the registrations its calls made."""

    #: False: a hook whose arguments are unknown; it is reported, not called
    callable: bool = True

    def __init__(self) -> None:
        self.registrations: list[Registration] = []

    def arguments(self) -> dict[str, Any]:
        raise NotImplementedError

    def finish(self) -> list[Registration]:
        return self.registrations

    def add(self, name: str, kind: str, description: str | None, parameters: Any = None) -> None:
        self.registrations.append(
            {"name": name, "kind": kind, "description": description, "parameters": parameters}
        )


def collector_for(
    hook: str,
    argnames: tuple[str, ...],
    *,
    llm: Any,
    ref: EntryPointRef,
    registry: Registry,
    cli: Any,
) -> Collector:
    """The collector for one call of ``hook``, whose spec takes ``argnames``."""
    if hook == "register_tools":
        return _Tools(llm, ref, registry)
    if hook == "register_models":
        return _Models(llm)
    if hook == "register_embedding_models":
        return _EmbeddingModels()
    if hook == "register_template_loaders":
        return _Loaders("template_loader")
    if hook == "register_fragment_loaders":
        return _Loaders("fragment_loader")
    if hook == "register_commands":
        return _Commands(cli)
    if tuple(argnames) == ("register",):
        return _Registered(hook)
    return _Uncallable(hook, argnames)


class _Tools(Collector):
    """``register(tool_or_function, name=None)`` as in ``llm.get_tools()``; into the registry."""

    def __init__(self, llm: Any, ref: EntryPointRef, registry: Registry) -> None:
        super().__init__()
        self._llm, self._ref, self._registry = llm, ref, registry
        self.added: list[str] = []

    def arguments(self) -> dict[str, Any]:
        def register(tool_or_function: Any, name: str | None = None) -> None:
            for spec in tool_specs(self._llm, self._ref, tool_or_function, name):
                self._registry.add_tool(spec)
                self.added.append(spec.name)

        return {"register": register}

    def finish(self) -> list[Registration]:
        return [self._registry.tools[name].describe() for name in self.added]


class _Models(Collector):
    """``register`` as llm builds it, and ``model_aliases`` holding the models llm's own default
    plugins register (as in every user's llm), so a plugin that changes other plugins' models
    rather than registering its own (an async model added to each) is seen changing them."""

    def __init__(self, llm: Any) -> None:
        super().__init__()
        self._given = _models_of_llm_itself(llm)
        self._before = [_model_state(entry) for entry in self._given]

    def finish(self) -> list[Registration]:
        for index, entry in enumerate(self._given):
            if index >= len(self._before):
                change = "added to model_aliases"
            else:
                change = _model_change(self._before[index], _model_state(entry))
            model = getattr(entry, "model", None) or getattr(entry, "async_model", None)
            model_id = getattr(model, "model_id", None)
            if change and isinstance(model_id, str):
                self.add(model_id, "model", f"{_display(model)}: llm's own model, {change}")
        return self.registrations

    def arguments(self) -> dict[str, Any]:
        def register(model: Any, async_model: Any = None, aliases: Any = None) -> None:
            primary = model if model is not None else async_model
            model_id = _model_id(primary, "register(model, async_model=None, aliases=None)")
            description = _display(primary)
            if model is not None and async_model is not None:
                description += " (and async)"
            self.add(model_id, "model", description + _aliases(aliases), _options(primary))

        return {"register": register, "model_aliases": self._given}


class _EmbeddingModels(Collector):
    def arguments(self) -> dict[str, Any]:
        def register(model: Any, aliases: Any = None) -> None:
            model_id = _model_id(model, "register(model, aliases=None)")
            self.add(model_id, "embedding_model", _display(model) + _aliases(aliases))

        return {"register": register}


class _Loaders(Collector):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self._kind = kind

    def arguments(self) -> dict[str, Any]:
        def register(prefix: Any, loader: Any) -> None:
            if not isinstance(prefix, str) or not prefix:
                raise TypeError(
                    f"register(prefix, loader): prefix must be a string, got {prefix!r}"
                )
            if not callable(loader):
                raise TypeError(
                    f"register({prefix!r}, loader): loader must be callable, "
                    f"got {type(loader).__name__}"
                )
            # as llm does: a prefix registered again gets a suffix
            taken = {registration["name"] for registration in self.registrations}
            name, suffix = prefix, 0
            while name in taken:
                suffix += 1
                name = f"{prefix}_{suffix}"
            self.add(name, self._kind, summary(loader))

        return {"register": register}


class _Commands(Collector):
    """A copy of llm's ``cli`` group: what the plugin adds to it, or to one of its groups."""

    def __init__(self, cli: Any) -> None:
        super().__init__()
        if cli is None:  # llm's command line would not import: a bare group stands in
            cli = importlib.import_module("click").Group(name="llm")
        self._group = copy.copy(cli)
        self._group.commands = dict(cli.commands)
        self._before = {name: _subcommands(command) for name, command in cli.commands.items()}
        self._original = dict(cli.commands)
        self._shapes = {
            (name, sub): _shape(command)
            for name, group in cli.commands.items()
            for sub, command in [("", group), *_subcommands(group).items()]
        }

    def arguments(self) -> dict[str, Any]:
        return {"cli": self._group}

    def finish(self) -> list[Registration]:
        extended = []
        for name, command in self._group.commands.items():
            if self._original.get(name) is not command:  # added, or in place of llm's own
                self.add(name, "command", _short_help(command))
            else:
                extended.append((name, command))
        for name, command in extended:  # then what it added to one of llm's groups
            self._changed(name, "", command)
            for sub, subcommand in _subcommands(command).items():
                if self._before[name].get(sub) is not subcommand:
                    self.add(f"{name} {sub}", "command", _short_help(subcommand))
                else:
                    self._changed(name, sub, subcommand)
        return self.registrations

    def _changed(self, name: str, sub: str, command: Any) -> None:
        """One of llm's own commands the plugin changed in place: its options, its callback."""
        before = self._shapes.get((name, sub))
        change = _command_change(before, _shape(command)) if before is not None else None
        if change:
            self.add(f"{name} {sub}".strip(), "command", f"llm's own command, {change}")


class _Registered(Collector):
    """A hook llm added after this module was written: ``register(obj, ...)``, one each."""

    def __init__(self, hook: str) -> None:
        super().__init__()
        self._kind = _kind_of(hook)

    def arguments(self) -> dict[str, Any]:
        def register(*args: Any, **kwargs: Any) -> None:
            first = args[0] if args else next(iter(kwargs.values()), None)
            self.add(_name_of(first), self._kind, summary(first) if first is not None else None)

        return {"register": register}


class _Uncallable(Collector):
    """A hook whose arguments this module cannot build: reported as a hook, not called."""

    callable = False

    def __init__(self, hook: str, argnames: tuple[str, ...]) -> None:
        super().__init__()
        self.add(hook, "hook", f"implements {hook}({', '.join(argnames)}); not called")

    def arguments(self) -> dict[str, Any]:
        return {}


# -- describing what was registered ----------------------------------------------------------


def _model_id(model: Any, call: str) -> str:
    model_id = getattr(model, "model_id", None)
    if not isinstance(model_id, str) or not model_id:
        raise TypeError(
            f"{call} takes an llm model with a model_id string, got {type(model).__name__} "
            f"{model!r}"
        )
    return model_id


def _display(model: Any) -> str:
    """What ``llm models`` shows for it (``Markov: markov``)."""
    try:
        return str(model)
    except Exception:
        return f"{type(model).__name__}: {model.model_id}"


def _aliases(aliases: Any) -> str:
    try:
        names = [str(alias) for alias in aliases or ()]
    except TypeError:
        names = [str(aliases)]
    return f" (aliases: {', '.join(names)})" if names else ""


def _options(model: Any) -> Any:
    """The JSON Schema of a model's options (``llm -o name value``), if it has any."""
    options = getattr(model, "Options", None)
    schema = getattr(options, "model_json_schema", None) or getattr(options, "schema", None)
    if schema is None:
        return None
    try:
        described = schema()
        json.dumps(described)
    except Exception:
        return None
    if not isinstance(described, dict) or not described.get("properties"):
        return None
    return described


def _models_of_llm_itself(llm: Any) -> list[Any]:
    """What llm's default plugins (``llm.plugins.DEFAULT_PLUGINS``) register, as
    ``ModelWithAliases``; none where this llm names no such plugins or cannot build them."""
    with_aliases: Any = getattr(llm, "ModelWithAliases", None)
    if with_aliases is None:
        return []
    models: list[Any] = []

    def register(model: Any, async_model: Any = None, aliases: Any = None) -> None:
        models.append(with_aliases(model, async_model, set(aliases or ())))

    for name in getattr(importlib.import_module("llm.plugins"), "DEFAULT_PLUGINS", ()):
        try:
            hook = getattr(importlib.import_module(name), "register_models", None)
            if callable(hook):
                hook(register)
        except Exception:  # llm's own code: the plugin is judged without those models
            continue
    return models


def _model_state(entry: Any) -> tuple[Any, Any, frozenset[str]]:
    aliases = getattr(entry, "aliases", None) or ()
    try:
        names = frozenset(str(alias) for alias in aliases)
    except TypeError:
        names = frozenset()
    return getattr(entry, "model", None), getattr(entry, "async_model", None), names


def _model_change(
    before: tuple[Any, Any, frozenset[str]], after: tuple[Any, Any, frozenset[str]]
) -> str:
    said = []
    if after[0] is not before[0]:
        said.append("its model replaced")
    if after[1] is not before[1]:
        said.append("an async model added" if before[1] is None else "its async model replaced")
    if after[2] != before[2]:
        said.append("its aliases changed")
    return "; ".join(said)


def _shape(command: Any) -> tuple[Any, tuple[Any, ...]]:
    """A command's callback and options, by identity: what a plugin changing it replaces."""
    params = getattr(command, "params", None)
    return getattr(command, "callback", None), tuple(params) if isinstance(params, list) else ()


def _command_change(before: tuple[Any, tuple[Any, ...]], after: tuple[Any, tuple[Any, ...]]) -> str:
    said = []
    added = [p for p in after[1] if not any(p is q for q in before[1])]
    removed = [p for p in before[1] if not any(p is q for q in after[1])]
    if added:
        said.append(f"options added: {', '.join(_option_name(p) for p in added)}")
    if removed:
        said.append(f"options removed: {', '.join(_option_name(p) for p in removed)}")
    if after[0] is not before[0]:
        said.append("its callback replaced")
    return "; ".join(said)


def _option_name(param: Any) -> str:
    opts = getattr(param, "opts", None)
    if isinstance(opts, list) and opts:
        return "/".join(str(opt) for opt in opts)
    return str(getattr(param, "name", None) or type(param).__name__)


def _subcommands(command: Any) -> dict[str, Any]:
    commands = getattr(command, "commands", None)
    return dict(commands) if isinstance(commands, dict) else {}


def _short_help(command: Any) -> str | None:
    try:
        text = command.get_short_help_str(limit=200)
    except Exception:
        return None
    return text if isinstance(text, str) and text else None


def _kind_of(hook: str) -> str:
    kind = hook[len("register_") :] if hook.startswith("register_") else hook
    return kind[:-1] if kind.endswith("s") else kind


def _name_of(obj: Any) -> str:
    if isinstance(obj, str):
        return obj
    for attribute in ("model_id", "name", "__name__"):
        value = getattr(obj, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(obj).__name__
