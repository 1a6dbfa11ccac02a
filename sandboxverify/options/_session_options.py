"""The options table's part for the other commands: ``run`` and ``record`` (a session), and
``matrix``."""

from __future__ import annotations

from sandboxverify.options._kinds import (
    Choice,
    FilePath,
    Flag,
    Kind,
    Pair,
    Requirement,
    Seconds,
    Toggle,
    Whole,
)
from sandboxverify.options._option import DEFAULT_MAX_STEPS, CommandName, Option
from sandboxverify.runtime.hosts import SESSION_HOSTS
from sandboxverify.sandbox import INSTALLER_CHOICES, ISOLATION_CHOICES

SESSION: tuple[CommandName, ...] = ("run", "record")

SESSION_OPTIONS: tuple[Option, ...] = (
    # -- run and record: the session --------------------------------------------------------
    Option(
        "model",
        Kind(),
        {
            "run": "With --live: the llm model to run against the recording (by default the "
            "model in the playbook's [recording]).",
            "record": "The llm model to drive (with --refresh: the playbook's, unless given).",
        },
        SESSION,
        short="-m",
        default_text=None,
        metavar="MODEL",
    ),
    Option(
        "output",
        FilePath(),
        "The playbook to write (.toml); its trace goes beside it (.jsonl).",
        ("record",),
        short="-o",
        default_text="the --refresh playbook",
        metavar="FILE",
    ),
    Option(
        "refresh",
        FilePath(),
        "Record this playbook again: its own prompts, model, system prompt, options, plugins, "
        "host, mocks and normalize (only --model may differ); written back to it (or -o).",
        ("record",),
        metavar="PLAYBOOK",
    ),
    Option(
        "plugin",
        Kind(),
        {
            "run": "A plugin to load: 'module:attr' or an entry-point name; with --host mcp, a "
            "server command (repeatable). By default the playbook's plugins, else every plugin "
            "of --dist.",
            "record": "A plugin to load, as 'run' takes it (repeatable); written into the "
            "playbook. By default every plugin of --dist.",
        },
        SESSION,
        dest="plugins",
        multiple=True,
        default=(),
        metavar="SPEC",
    ),
    Option(
        "dist",
        Kind(),
        "The installed distribution whose plugins load by default.",
        SESSION,
        default_text="[project] name of ./pyproject.toml",
        metavar="NAME",
    ),
    Option(
        "host",
        Choice(choices=SESSION_HOSTS),
        "How plugins are loaded; with mcp, --plugin is the command that starts the server.",
        ("run",),
        default_text="the playbook's host, else native",
    ),
    Option(
        "host",
        Choice(choices=SESSION_HOSTS),
        "How plugins are loaded (written into the playbook).",
        ("record",),
        default="native",
    ),
    Option(
        "group",
        Kind(),
        "Entry-point group of the plugins.",
        SESSION,
        default_text="the host's group",
        metavar="NAME",
    ),
    Option(
        "mocks",
        FilePath(),
        "A TOML file with [mock_tools] and [mock_ui] (an existing playbook will do): "
        "environmental tools and UI answers, copied into the recording.",
        ("record",),
        metavar="FILE",
    ),
    Option(
        "system",
        Kind(),
        "A system prompt for the model (recorded).",
        ("record",),
        metavar="TEXT",
    ),
    Option(
        "normalize",
        Kind(),
        "A regex for what changes from run to run (ids, times), written into the playbook's "
        "normalize for --compare-results (repeatable).",
        ("record",),
        multiple=True,
        default=(),
        metavar="REGEX",
    ),
    Option(
        "option",
        Pair(),
        "An option of the model, as llm's -o takes it (repeatable), e.g. --option temperature "
        "0. Options named like secrets are used, never written.",
        SESSION,
        dest="model_options",
        multiple=True,
        default=(),
        metavar="NAME VALUE",
    ),
    Option(
        "max-steps",
        Whole(minimum=1),
        "Model steps one turn may take before the run fails (too_many_steps).",
        SESSION,
        default=DEFAULT_MAX_STEPS,
    ),
    Option(
        "compare-results",
        Toggle(),
        "Compare each tool's result with the recorded one (replay_mismatch when it differs; "
        "normalize = ['regex', ...] in the playbook masks ids and times).",
        ("run",),
        default_text="on where the playbook records results (compare_results = false: off)",
    ),
    Option(
        "live",
        Flag(),
        "The contract run: a live model chooses again from the same prompts (mocks as in the "
        "playbook); every step where it leaves the recording is reported; exit 1 if any.",
        ("run",),
        default=False,
    ),
    Option(
        "trace",
        FilePath(),
        {
            "run": "Write the session's trace (JSONL) to FILE.",
            "record": "Where the trace goes. [default: FILE.jsonl]",
        },
        SESSION,
        metavar="FILE",
    ),
    Option(
        "timeout",
        Seconds(),
        {
            "run": "How long the whole run may take.",
            "record": "How long the whole session may take. [default: no limit in place; with "
            "--sandbox, 600, after which the session is killed]",
        },
        SESSION,
        metavar="SECONDS",
    ),
    Option(
        "sandbox",
        Flag(),
        "Record check-style: build the project's sdist and wheel, install the wheel (and "
        "--with) in a fresh sandbox, and let the model drive it there.",
        ("record",),
        default=False,
    ),
    Option(
        "project",
        FilePath(),
        "With --sandbox: the project directory to build (or its built wheel).",
        ("record",),
        default_text=".",
        metavar="PATH",
    ),
    Option(
        "installer",
        Choice(choices=INSTALLER_CHOICES),
        "With --sandbox: make the sandbox with uv or virtualenv+pip.",
        ("record",),
        default_text="auto",
    ),
    Option(
        "isolation",
        Choice(choices=ISOLATION_CHOICES),
        "With --sandbox: how the session's plugin code runs, as check --isolation "
        "takes it: strict (the OS sandbox or exit 2), auto or process.",
        ("record",),
        default_text="auto",
    ),
    Option(
        "pass-env",
        Kind(),
        "With --sandbox: an environment variable (glob) the sandbox sees "
        "(repeatable); nothing else of yours does, so name the model's key here.",
        ("record",),
        multiple=True,
        metavar="NAME",
    ),
    Option(
        "with",
        Requirement(example="pytest"),
        "With --sandbox: also install this requirement (repeatable): llm and the "
        "model's plugin, e.g. --with llm-anthropic.",
        ("record",),
        dest="with_requirements",
        multiple=True,
        metavar="REQUIREMENT",
    ),
    Option(
        "python",
        Kind(),
        "With --sandbox: the interpreter of the sandbox, a version or a path.",
        ("record",),
        default_text="the one running sandboxverify",
        metavar="SPEC",
    ),
    # -- matrix ---------------------------------------------------------------------------------
    Option(
        "os",
        Kind(),
        "Add an 'os' axis with these runners (repeatable), e.g. --os ubuntu-latest "
        "--os macos-latest.",
        ("matrix",),
        dest="systems",
        multiple=True,
        default=(),
        metavar="RUNNER",
    ),
)
