"""The registry's hosts for libraries and tools that read one group of plugins each, many of them
their own way (a class path split at its last dot, a module name, a manifest file, a function
that returns directories): each plugin is loaded as its application reads it, then used.

Part of the one registry (``_registry`` holds them with the others); plain data, read by both
sides.
"""

from __future__ import annotations

from sandboxverify.runtime.hosts._hostspec import Group, Host, NamedModules, Wording


def _declare(group: str, example: str) -> str:
    return f'declare it in pyproject.toml: [project.entry-points."{group}"] {example}'


APPLICATION_HOSTS = (
    Host(
        "pygments",
        loader="_pygments:load_pygments",
        groups=[
            Group("pygments.lexers", application="pygments"),
            Group("pygments.styles", application="pygments"),
            Group("pygments.formatters", application="pygments"),
            Group("pygments.filters", application="pygments"),
        ],
        loading="loaded as Pygments loads it and looked up with Pygments' own functions (a lexer "
        "or formatter by its aliases, a style or filter by name), then used: a sample "
        "highlighted with the lexer, in the style, by the formatter, through the filter",
        kinds=["lexer", "style", "formatter", "filter"],
        wording=Wording(
            empty="registered nothing with Pygments",
            empty_hint="give the lexer or formatter class an alias",
            setup="Pygments failed while using the plugin (traceback in details): fix the "
            "lexer's token rules, the style's colours, or the formatter's or filter's code",
            validate_hint="a pygments.lexers or pygments.formatters entry point names a Lexer "
            "or Formatter subclass, found by its aliases (lexer aliases in lower case); a "
            "pygments.styles or pygments.filters one names a Style or Filter subclass, found by "
            "the entry point's name",
            declare_hint=_declare("pygments.lexers", 'name = "package.lexer:MyLexer"'),
            register_hint="give the lexer or formatter that alias, or name the style's or "
            "filter's entry point so, or fix --expect-tools",
        ),
    ),
    Host(
        "keyring",
        loader="_keyring:load_keyring",
        groups=[Group("keyring.backends", application="keyring", names_module=True)],
        loading="keyring's own plugin loading (an `Error initializing plugin` it logs fails), "
        "then each backend class the plugin registered asked for its priority and created, as "
        "`get_all_keyring()` does; one not viable here is said, not failed",
        kinds=["backend"],
        wording=Wording(
            empty="registered no keyring backend",
            empty_hint="define a keyring.backend.KeyringBackend subclass in the module the entry "
            "point names: importing it registers the backend",
            setup="keyring could not initialize the plugin or create its backend (traceback in "
            "details)",
            validate_hint="a keyring.backends entry point names the module that defines a "
            "KeyringBackend subclass (or a callable keyring calls with no arguments)",
            declare_hint=_declare("keyring.backends", 'name = "package.backend"'),
            register_hint="define that backend in the plugin's module, or fix --expect-tools",
        ),
    ),
    Host(
        "fsspec",
        loader="_fsspec:load_fsspec",
        groups=[Group("fsspec.specs", application="fsspec")],
        loading="`fsspec.get_filesystem_class(name)`, as fsspec resolves a protocol: the value "
        "is a class path split at its last dot (`pkg.mod:FS` or `pkg.mod.FS`), and must name an "
        "`AbstractFileSystem` class",
        kinds=["filesystem"],
        wording=Wording(
            empty="registered no filesystem",
            empty_hint="name an fsspec AbstractFileSystem subclass",
            setup="fsspec could not load the filesystem (traceback in details)",
            validate_hint="fsspec reads an fsspec.specs value as a class path "
            "('package.module:MyFileSystem', or with a dot): name an AbstractFileSystem subclass",
            declare_hint=_declare("fsspec.specs", 'protocol = "package.module:MyFileSystem"'),
            register_hint="name the entry point after the protocol, or fix --expect-tools",
        ),
    ),
    Host(
        "sqlalchemy",
        loader="_sqlalchemy:load_sqlalchemy",
        groups=[Group("sqlalchemy.dialects", application="sqlalchemy")],
        loading="resolved as `create_engine` resolves `dialect+driver://` "
        "(`registry.load`, `URL.get_dialect()`), the dialect created and a query compiled with "
        "it; the DBAPI driver a user installs is not needed",
        kinds=["dialect"],
        wording=Wording(
            empty="registered no dialect",
            empty_hint="name the Dialect class",
            setup="SQLAlchemy could not load or use the dialect (traceback in details)",
            validate_hint="a sqlalchemy.dialects entry point is named 'dialect' or "
            "'dialect.driver' (a URL's dialect+driver) and names the Dialect class, or a module "
            "with a 'dialect' attribute",
            declare_hint=_declare("sqlalchemy.dialects", 'mydb = "package.dialect:MyDialect"'),
            register_hint="name the entry point after the URL's dialect (and driver), or fix "
            "--expect-tools",
        ),
    ),
    Host(
        "setuptools",
        loader="_setuptools:load_setuptools",
        groups=[
            Group("distutils.commands", application="setuptools"),
            Group("setuptools.finalize_distribution_options", application="setuptools"),
            Group("distutils.setup_keywords", application="setuptools"),
            Group("setuptools.file_finders", application="setuptools"),
            Group("egg_info.writers", application="setuptools"),
        ],
        loading="in a setuptools `Distribution`, in an empty directory: a command found by "
        "`get_command_class`, created and finalized; finalize hooks run by "
        "`Distribution.finalize_options()`; a file finder called; a setup keyword or egg-info "
        "writer loaded as the callable setuptools calls",
        kinds=["command", "hook", "keyword", "file_finder", "writer"],
        wording=Wording(
            empty="registered nothing with setuptools",
            empty_hint="name a Command subclass or the function setuptools calls",
            setup="setuptools failed with the plugin installed (traceback in details): every "
            "build in that environment would fail the same way",
            validate_hint="a distutils.commands entry point names a setuptools Command "
            "subclass; the other setuptools groups name a function setuptools calls",
            declare_hint=_declare("distutils.commands", 'name = "package.command:MyCommand"'),
            register_hint="declare that entry point, or fix --expect-tools",
        ),
    ),
    Host(
        "markdown",
        loader="_markdown:load_markdown",
        groups=[Group("markdown.extensions", application="markdown")],
        loading="`markdown.Markdown(extensions=[name])` converts a sample: the entry point names "
        "what Markdown calls to make the `Extension` (its class); a module named by users, with "
        "no entry point, makes it with its `makeExtension()`",
        kinds=["extension"],
        named=NamedModules(
            "markdown:extensions",
            application="markdown",
            function="makeExtension",
            arguments=0,
            named_in="`markdown.Markdown(extensions=[...])`",
            distinctive=True,
        ),
        wording=Wording(
            empty="registered no extension",
            empty_hint="name the Extension subclass",
            setup="Markdown failed with the extension (traceback in details)",
            validate_hint="a markdown.extensions entry point names the Extension subclass "
            "('package.module:MyExtension'), not its module: Markdown calls it",
            declare_hint=_declare("markdown.extensions", 'name = "package.ext:MyExtension"'),
            register_hint="name the entry point after the extension, or fix --expect-tools",
        ),
    ),
    Host(
        "pylint",
        loader="_pylint:load_pylint",
        loading="pylint run on a small module with `--load-plugins=<module>` (no configuration "
        "file): the plugin's `register(linter)` must run and pylint must check the module "
        "without crashing in a checker; what it says about the module is no failure",
        kinds=["plugin", "checker"],
        named=NamedModules(
            "pylint:plugins",
            application="pylint",
            function="register",
            arguments=1,
            named_in="`load-plugins` (pylint's configuration or `--load-plugins`)",
        ),
        wording=Wording(
            empty="registered nothing with pylint",
            empty_hint="register the plugin's checkers in register(linter)",
            setup="pylint failed with the plugin loaded (traceback in details)",
            validate_hint="a module named in load-plugins defines register(linter), which "
            "pylint calls",
            declare_hint="users name the module in load-plugins; no entry point is read",
            register_hint="register it in register(linter), or fix --expect-tools",
            exercise_hint="pylint crashed checking ordinary code with the plugin loaded: fix "
            "the checker the traceback in details points at",
        ),
    ),
    Host(
        "ipython",
        loader="_ipython:load_ipython",
        loading="`%load_ext <module>` in a fresh IPython shell (history off), then a cell run: "
        "`load_ipython_extension(ipython)` must load, and every callback it registers must "
        "run without IPython showing an error",
        kinds=["extension", "magic", "callback"],
        named=NamedModules(
            "ipython:extensions",
            application="ipython",
            function="load_ipython_extension",
            arguments=1,
            named_in="`%load_ext` (or `c.InteractiveShellApp.extensions`)",
            distinctive=True,
        ),
        wording=Wording(
            empty="registered nothing with IPython",
            empty_hint="define load_ipython_extension(ipython) in the module",
            setup="IPython failed with the extension loaded (traceback in details)",
            validate_hint="a module users load with %load_ext defines "
            "load_ipython_extension(ipython)",
            declare_hint="users load the module with %load_ext; no entry point is read",
            register_hint="register it in load_ipython_extension(ipython), or fix --expect-tools",
            exercise_hint="IPython showed an error running a cell with the extension loaded "
            "(a callback it registered raised): fix what the traceback in details points at",
        ),
    ),
    Host(
        "mypy",
        loader="_mypy:load_mypy",
        loading="mypy run on a small typed module with `plugins = <module>` (no cache): the "
        "module's `plugin(version)` must return a `Plugin` subclass mypy accepts, and mypy must "
        "check the module without crashing in the plugin's hooks; type errors are no failure",
        kinds=["plugin", "plugin_class"],
        named=NamedModules(
            "mypy:plugins",
            application="mypy",
            function="plugin",
            arguments=1,
            named_in="`plugins = ...` (mypy's configuration)",
        ),
        wording=Wording(
            empty="registered nothing with mypy",
            empty_hint="return the plugin's Plugin subclass from plugin(version)",
            setup="mypy failed with the plugin (its output in details)",
            validate_hint="a module named in mypy's plugins defines plugin(version), which "
            "returns a subclass of mypy.plugin.Plugin",
            declare_hint="users name the module in mypy's plugins; no entry point is read",
            register_hint="return it from plugin(version), or fix --expect-tools",
            exercise_hint="mypy crashed checking ordinary code with the plugin: fix the hook "
            "the traceback in details points at",
        ),
    ),
    Host(
        "napari",
        loader="_napari:load_napari",
        groups=[Group("napari.manifest", application="npe2", names_file=True)],
        loading="the manifest file the value names (`package:napari.yaml`: a file, not an "
        "object) read and validated by npe2, napari's plugin engine, and every `python_name` "
        "it contributes imported",
        kinds=["manifest", "command"],
        wording=Wording(
            empty="contributes nothing to napari",
            empty_hint="declare contributions (commands, readers, writers, widgets) in the "
            "manifest",
            setup="npe2 refused the manifest or could not import what it names (traceback in "
            "details)",
            validate_hint="a napari.manifest entry point names the manifest file inside its "
            "package ('package:napari.yaml'; npe2 reads the file, it is no object to load), "
            "and the manifest's name is the distribution's",
            declare_hint=_declare("napari.manifest", 'name = "package:napari.yaml"'),
            register_hint="contribute it in the manifest, or fix --expect-tools",
        ),
    ),
    Host(
        "matplotlib",
        loader="_matplotlib:load_matplotlib",
        groups=[Group("matplotlib.backend", application="matplotlib", names_module=True)],
        loading="resolved by matplotlib's backend registry, the value imported as a module that "
        "must define `FigureCanvas`; a non-interactive backend draws and saves a figure",
        kinds=["backend"],
        wording=Wording(
            empty="registered no backend",
            empty_hint="define FigureCanvas in the backend's module",
            setup="matplotlib failed with the backend (traceback in details)",
            validate_hint="a matplotlib.backend entry point names the backend's module "
            "('package.backend_name', no ':attribute'): matplotlib imports it and reads its "
            "FigureCanvas",
            declare_hint=_declare("matplotlib.backend", 'name = "package.backend_name"'),
            register_hint="name the entry point after the backend, or fix --expect-tools",
        ),
    ),
    Host(
        "pyinstaller",
        loader="_pyinstaller:load_pyinstaller",
        groups=[Group("pyinstaller40", application="pyinstaller")],
        loading="only the entry point named `hook-dirs` (and `tests`, for PyInstaller's test "
        "runner) is read: called, it must return existing directories; their `hook-*.py` files "
        "are what it provides",
        kinds=["hook_dir", "hook", "test_dir"],
        wording=Wording(
            empty="provides no hook directory",
            empty_hint="return the directories that hold the hook-<module>.py files",
            setup="the hook-dirs function raised or returned no existing directory (traceback "
            "in details)",
            validate_hint="PyInstaller reads only the pyinstaller40 entry point named "
            "'hook-dirs' (and 'tests'): a function returning a list of directories",
            declare_hint=_declare("pyinstaller40", '"hook-dirs" = "package.__pyinstaller:dirs"'),
            register_hint="put that hook file in a returned directory, or fix --expect-tools",
        ),
    ),
    Host(
        "opentelemetry",
        loader="_opentelemetry:load_opentelemetry",
        groups=[
            Group("opentelemetry_instrumentor", application="opentelemetry-instrumentation"),
            Group("opentelemetry_pre_instrument", application="opentelemetry-instrumentation"),
            Group("opentelemetry_post_instrument", application="opentelemetry-instrumentation"),
        ],
        loading="as `opentelemetry-instrument` loads it: an instrumentor is skipped, with a "
        "note, when the library it instruments (its `instruments` extra) is not installed; else "
        "created, its `instrumentation_dependencies()` checked, `instrument()` and "
        "`uninstrument()` called; a pre- or post-instrument hook is called",
        kinds=["instrumentor", "hook"],
        wording=Wording(
            empty="instruments nothing",
            empty_hint="name a BaseInstrumentor subclass",
            setup="the instrumentor raised while instrumenting (traceback in details)",
            validate_hint="an opentelemetry_instrumentor entry point names a BaseInstrumentor "
            "subclass, created with no arguments",
            declare_hint=_declare(
                "opentelemetry_instrumentor", 'library = "package:LibraryInstrumentor"'
            ),
            register_hint="name the entry point after the library, or fix --expect-tools",
        ),
    ),
)
