"""Planning: which host judges each entry point of a wheel, and why."""

from __future__ import annotations

from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.stages._hosts import PluginPlan, default_groups, plan_plugins, smoke_driver


def ref(group: str, name: str = "p", value: str = "pkg.mod") -> EntryPointRef:
    return EntryPointRef(name, group, value)


def hosts(
    plan_refs: list[EntryPointRef], deps: frozenset[str] = frozenset(), **kw: object
) -> tuple[PluginPlan, dict[tuple[str, str], str]]:
    kw.setdefault("groups", ())
    plan = plan_plugins(plan_refs, deps, host=kw.pop("host", "auto"), **kw)  # type: ignore[arg-type]
    return plan, {(p.ref.group, p.ref.name): p.host for p in plan.plugins}


def test_auto_judges_each_plugin_by_the_application_of_its_group() -> None:
    groups = [
        ("sandboxverify.plugins", "native"),
        ("llm", "llm"),
        ("pytest11", "pytest"),
        ("datasette", "pluggy"),
        ("tox", "pluggy"),
        ("flake8.extension", "flake8"),
        ("flake8.report", "flake8"),
        ("sphinx.html_themes", "sphinx"),
        ("mkdocs.plugins", "mkdocs"),
        ("myapp.plugins", "entrypoints"),
    ]
    plan, chosen = hosts([ref(group, group) for group, _ in groups])
    assert chosen == {(group, group): host for group, host in groups}
    assert plan.groups == tuple(group for group, _ in groups)
    reasons = {p.ref.group: p.reason for p in plan.plugins}
    assert "loaded by pytest" in reasons["pytest11"]
    assert "no application" in reasons["myapp.plugins"]


def test_console_scripts_are_mcp_servers_only_when_the_distribution_depends_on_an_sdk() -> None:
    scripts = [ref("console_scripts", "serve")]
    assert hosts(scripts)[1] == {}
    for sdk in ("mcp", "fastmcp"):
        plan, chosen = hosts(scripts, frozenset({sdk, "httpx"}))
        assert chosen == {("console_scripts", "serve"): "mcp"}
        assert sdk in plan.plugins[0].reason
    assert hosts([ref("gui_scripts", "app")], frozenset({"mcp"}))[1] == {}


def test_a_near_miss_of_a_known_group_is_reported_not_loaded() -> None:
    refs = [ref("pytest_11", "a"), ref("sandboxverify.plugin", "b"), ref("llm", "c")]
    plan, chosen = hosts(refs)
    assert chosen == {("llm", "c"): "llm"}
    assert plan.near_misses == {
        "pytest_11": "pytest11",
        "sandboxverify.plugin": "sandboxverify.plugins",
    }
    named, chosen = hosts(refs, groups=["pytest_11"])
    assert chosen == {("pytest_11", "a"): "entrypoints"}
    assert named.near_misses == {"sandboxverify.plugin": "sandboxverify.plugins"}


def test_a_named_host_keeps_its_groups_and_judges_every_plugin_in_them() -> None:
    refs = [ref("sandboxverify.plugins", "a"), ref("pytest11", "b")]
    plan, chosen = hosts(refs, host="native")
    assert chosen == {("sandboxverify.plugins", "a"): "native"}
    assert plan.plugins[0].reason == "--host native"
    assert default_groups("pytest") == ("pytest11",)
    assert default_groups("auto") == ()


def test_a_group_may_demand_a_callable_and_a_custom_group_may_name_its_hookspecs() -> None:
    refs = [ref("myapp.plugins", "a"), ref("other.hooks", "b")]
    plan = plan_plugins(
        refs,
        frozenset(),
        host="auto",
        groups=("myapp.plugins", "other.hooks"),
        callable_groups=("myapp.plugins",),
        hookspecs={"other.hooks": "other.specs"},
    )
    first, second = plan.plugins
    assert (first.host, first.require_callable, first.kind) == ("entrypoints", True, "entry_point")
    assert "a callable" in first.reason
    assert (second.host, second.hookspecs) == ("pluggy", "other.specs")
    assert second.load_options()["hookspecs"] == "other.specs"


def test_smoke_drives_the_first_plugin_whose_tools_a_model_can_call() -> None:
    plan, _ = hosts([ref("pytest11", "a"), ref("llm", "b")])
    driver = smoke_driver(plan.plugins, "auto")
    assert driver is not None and driver.ref.name == "b"
    assert smoke_driver(plan.plugins[:1], "auto") is None
