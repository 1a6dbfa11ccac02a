"""What every host shares: the load error and its stage, a server's failure, what a load returns,
the context a host runs in, and resolving an entry point with a helpful miss."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

    from sandboxverify.runtime._protocol import EntryPointRef

# ``inspect`` is imported by the functions below that use it, not here: it is a good part of a
# plugin load's start-up, and loading an MCP server needs none of it.

#: Where loading a plugin went wrong: importing it, validating what the entry point names,
#: the plugin's own registration code, (``mcp``) the server process it runs, the
#: application that loads it (not installed, or it refused the plugin: a failed ``pytest
#: --collect-only``, ``sphinx-build`` or ``mkdocs build``), or the application using it
#: (``exercise``: a hook of the plugin's raised while the application ran, a fixture broke
#: when a test used it).
LoadStage = Literal["import", "validate", "setup", "server", "application", "exercise"]


class PluginLoadError(Exception):
    """Loading one plugin failed; ``cause`` is what the plugin's code (or the import) raised.

    ``where`` names the part of the plugin that raised when the stage alone does not (``the
    register_models hook``); :attr:`message` is the cause's message with it.
    """

    def __init__(self, stage: LoadStage, cause: BaseException, *, where: str | None = None) -> None:
        self.stage = stage
        self.cause = cause
        self.where = where
        super().__init__(f"{stage}: {self.message}")

    @property
    def message(self) -> str:
        """What is reported: the cause's message, and where it was raised if that is known."""
        return f"{self.cause} (in {self.where})" if self.where else str(self.cause)


class ServerFailure(Exception):
    """A server process misbehaved: it died, spoke no protocol, or never answered.

    Reported with its own failure code (not ``plugin_load_failed``) and the tail of the
    server's stderr as details.
    """

    def __init__(
        self, message: str, *, code: Literal["probe_crashed", "timeout"], details: str = ""
    ) -> None:
        super().__init__(message)
        self.code = code
        self.details = details


class ApplicationFailed(Exception):
    """The application ran with the plugin and failed: a build or a check exited non-zero.

    The message is the application's own error output (its tail); ``details`` is the longer
    account it keeps, such as the traceback a ``sphinx-build`` saves, reported in its place.
    """

    def __init__(self, message: str, *, details: str = "") -> None:
        super().__init__(message)
        self.details = details


class ApplicationMissing(Exception):
    """The application that loads the plugin is not installed in the sandbox."""

    def __init__(self, application: str, group: str) -> None:
        super().__init__(
            f"{application} is not installed in the sandbox, and it is the application that "
            f"loads {group!r} plugins"
        )
        self.application = application


# LoadedPlugin and HostContext are plain classes, not dataclasses: every plugin load imports
# them, and ``dataclasses`` costs a load's start-up more than these few lines.


class LoadedPlugin:
    """What loading one plugin registered."""

    def __init__(
        self,
        ref: EntryPointRef,
        tools: list[dict[str, Any]],
        handlers: dict[str, int],
        *,
        skipped: str | None = None,
    ) -> None:
        self.ref: Final = ref
        #: the registrations: ``{"name", "kind", "description", "parameters"}`` each; ``kind``
        #: is what the application knows it as (``tool``, ``fixture``, ``model``, ``hook``...)
        self.tools: Final = tools
        self.handlers: Final = handlers
        #: why the application leaves the plugin out here by design (an instrumentor whose
        #: library is not installed): a note, not a failure, though it registers nothing
        self.skipped: Final = skipped


#: A server-to-client request answered on behalf of the user or the model: takes the request's
#: params, returns the result (``elicitation/create`` -> mock UI, ``sampling/createMessage`` ->
#: the playbook's next ``sample`` action).
Responder = Callable[[dict[str, Any]], dict[str, Any]]


#: seconds a server may take to start and to answer one request, unless told otherwise
DEFAULT_TIMEOUT = 60.0


class HostContext:
    """What a host may need besides the entry point: limits and answers to give."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        elicit: Responder | None = None,
        sample: Responder | None = None,
        require_callable: bool | None = None,
        kind: str = "tool",
        hookspecs: str | None = None,
    ) -> None:
        #: seconds a server may take to start and to answer one request
        self.timeout: Final = timeout
        self.elicit: Final = elicit
        self.sample: Final = sample
        #: ``entrypoints``: must the entry point name a callable? ``None``: unless the group's
        #: application loads modules (``MODULE_GROUPS``)
        self.require_callable: Final = require_callable
        #: ``entrypoints``: the kind its registrations are reported as
        self.kind: Final = kind
        #: ``pluggy``: the module holding the application's hookspecs, when the group is not
        #: known
        self.hookspecs: Final = hookspecs


def kind_of_group(kinds: Mapping[str, str], application: str, group: str) -> str:
    """The kind of registration a plugin of ``group`` makes; a group the application does not
    load fails validation."""
    kind = kinds.get(group)
    if kind is None:
        groups = " or ".join(repr(known) for known in kinds)
        raise PluginLoadError(
            "validate", ValueError(f"{application} loads plugins of group {groups}, not {group!r}")
        )
    return kind


def import_application(module: str, application: str, group: str) -> Any:
    """Import the application's ``module``; its absence is :class:`ApplicationMissing`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.split(".", maxsplit=1)[0] == exc.name.split(".")[0]:
            raise PluginLoadError("application", ApplicationMissing(application, group)) from exc
        raise PluginLoadError("application", exc) from exc
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("application", exc) from exc


def summary(target: Any) -> str | None:
    """The first paragraph of ``target``'s own docstring (a class's, not its base's), on one
    line: a registration's description."""
    import inspect  # noqa: PLC0415 - not for every load, see the top

    doc = (
        vars(target).get("__doc__") if inspect.isclass(target) else getattr(target, "__doc__", None)
    )
    if not isinstance(doc, str) or not doc.strip():
        return None
    return inspect.cleandoc(doc).split("\n\n", 1)[0].replace("\n", " ")


def tail(text: str, lines: int = 20) -> str:
    """The last ``lines`` non-blank lines of an application's output."""
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def resolve(ref: EntryPointRef) -> Any:
    """Import the entry point's module and walk its attribute path, with a helpful miss."""
    try:
        target: Any = importlib.import_module(ref.module)
    except (Exception, SystemExit) as exc:
        raise PluginLoadError("import", exc) from exc
    if ref.attribute is None:
        return target
    walked = ref.module
    for part in ref.attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            import difflib  # noqa: PLC0415 - only a miss needs it
            import inspect  # noqa: PLC0415 - not for every load, see the top

            names = [name for name in dir(target) if not name.startswith("__")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            kind = "module" if inspect.ismodule(target) else type(target).__name__
            error = AttributeError(f"{kind} {walked!r} has no attribute {part!r}{hint}")
            raise PluginLoadError("import", error) from exc
        except (Exception, SystemExit) as exc:  # a lazy module __getattr__ may raise anything
            raise PluginLoadError("import", exc) from exc
        walked = f"{walked}.{part}"
    return target


def require_callable(ref: EntryPointRef, target: Any, wanted: str) -> None:
    import inspect  # noqa: PLC0415 - not for every load, see the top

    if callable(target) and not inspect.ismodule(target):
        return
    type_name = "module" if inspect.ismodule(target) else type(target).__name__
    kind = ("an " if type_name[:1].lower() in "aeiou" else "a ") + type_name
    raise PluginLoadError(
        "validate",
        TypeError(f"entry point {ref.name!r} = {ref.value!r} resolved to {kind}, not {wanted}"),
    )


class CallWatch:
    """The function of a plugin's module that its application calls (pylint's
    ``register(linter)``, mypy's ``plugin(version)``), replaced by one that records the call:
    whether it came, its arguments, what it returned or raised. What it raised is the plugin's
    own failure (stage ``setup``), not the application's. ``snapshot``: what to keep of the
    arguments just before the call (the checkers a linter had); ``wrap``: what the application
    gets instead of the return value (a subclass that watches its creation)."""

    def __init__(
        self,
        module: Any,
        function: str,
        signature: str,
        application: str,
        *,
        snapshot: Callable[..., Any] | None = None,
        wrap: Callable[[Any], Any] | None = None,
    ) -> None:
        target = getattr(module, function, None)
        if not callable(target):
            raise PluginLoadError(
                "validate",
                AttributeError(
                    f"module {module.__name__!r} has no {function}({signature}): {application} "
                    "calls it to load the plugin"
                ),
            )
        self.where = f"{module.__name__}.{function}({signature})"
        self.called = False
        self.args: tuple[Any, ...] = ()
        self.before: Any = None
        self.returned: Any = None
        self.raised: BaseException | None = None

        def watched(*args: Any, **kwargs: Any) -> Any:
            self.called, self.args = True, args
            self.before = snapshot(*args) if snapshot is not None else None
            try:
                self.returned = target(*args, **kwargs)
            except BaseException as exc:
                self.raised = exc
                raise
            return wrap(self.returned) if wrap is not None else self.returned

        setattr(module, function, watched)

    def reraise(self) -> None:
        """What the function raised, as the plugin's failure at stage ``setup``."""
        if self.raised is not None:
            raise PluginLoadError("setup", self.raised, where=self.where) from self.raised
