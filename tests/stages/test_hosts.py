"""Planning: which host judges each entry point of a wheel, and why."""

from __future__ import annotations

from sandboxverify.report import ApplicationRecord
from sandboxverify.runtime._protocol import EntryPointRef
from sandboxverify.stages._applications import Found, ShippedHost
from sandboxverify.stages._hosts import (
    PluginPlan,
    default_groups,
    plan_plugins,
    smoke_driver,
    with_applications,
)


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


def found(name: str | None, how: str = "declared", host: str | None = None) -> Found:
    shipped = ShippedHost(str(name), host) if host else None
    return Found(ApplicationRecord(name, "1.0", how, installed=how != "declared"), shipped)  # type: ignore[arg-type]


def test_the_application_of_every_group_but_ours_and_scripts_is_looked_for() -> None:
    refs = [
        ref("sandboxverify.plugins", "a"),
        ref("pytest11", "b"),
        ref("acme.widgets", "c"),
        ref("sandboxverify.hosts", "d"),
        ref("console_scripts", "e"),
    ]
    plan = plan_plugins(refs, frozenset({"mcp"}), host="auto", groups=())
    assert plan.application_searches() == {"pytest11": "pytest", "acme.widgets": None}
    named, _ = hosts(refs, host="entrypoints", groups=["acme.widgets"])
    assert named.application_searches() == {}  # a named host loads what the sandbox holds


def test_the_host_an_application_ships_judges_a_group_no_host_of_ours_loads() -> None:
    plan, _ = hosts([ref("myapp.widgets", "w"), ref("other.things", "t")])
    judged = with_applications(
        plan,
        {
            "myapp.widgets": found("myapp", host="myapp.verify:host"),
            "other.things": found(None, "name"),
        },
    )
    widget, thing = judged.plugins
    assert (widget.host, widget.shipped) == ("myapp", ShippedHost("myapp", "myapp.verify:host"))
    assert widget.reason == (
        "its application myapp ships its own host for 'myapp.widgets': sandboxverify.hosts "
        "entry point myapp.verify:host"
    )
    assert widget.load_options()["shipped"] == {"dist": "myapp", "value": "myapp.verify:host"}
    assert widget.found is not None and widget.found.name == "myapp"
    assert (thing.host, thing.shipped) == ("entrypoints", None)
    assert thing.reason.endswith("; its application was not found")
    assert "shipped" not in thing.load_options()
    assert smoke_driver(judged.plugins, "auto") is None


def test_a_host_of_ours_is_overridden_by_the_application_s_only_when_asked() -> None:
    plan, _ = hosts([ref("pytest11", "p")])
    shipping = {"pytest11": found("pytest", host="pytest.verify:host")}
    [kept] = with_applications(plan, shipping).plugins
    assert kept.host == "pytest" and kept.shipped is None
    assert "--application-host pytest11" in kept.reason
    [asked] = with_applications(plan, shipping, application_hosts=["pytest11"]).plugins
    assert asked.shipped == ShippedHost("pytest", "pytest.verify:host")
    hooked, _ = hosts([ref("myapp.hooks", "h")], hookspecs={"myapp.hooks": "myapp.specs"})
    [pluggy] = with_applications(
        hooked, {"myapp.hooks": found("myapp", host="myapp.verify:host")}, ["myapp.hooks"]
    ).plugins
    assert (pluggy.host, pluggy.shipped) == ("pluggy", None)  # --hookspecs wins


def test_the_reason_says_where_the_application_came_from() -> None:
    plan, _ = hosts([ref("pytest11", "p"), ref("svt_lamps.bulbs", "b")])
    judged = with_applications(
        plan, {"pytest11": found("pytest", "registry"), "svt_lamps.bulbs": found("svt-lamps")}
    )
    pytest_plugin, bulb = judged.plugins
    assert (
        pytest_plugin.reason == "group 'pytest11' is loaded by pytest, installed by sandboxverify"
    )
    assert bulb.reason.endswith(", in its application svt-lamps")
