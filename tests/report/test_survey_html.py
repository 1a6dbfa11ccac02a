"""The survey's HTML page in a real headless browser (Debian's chromium and chromium-driver,
driven with selenium): it needs no network, its bar shows the counts, and its table sorts and
filters by class. Without the browser these tests fail (never skip): .ci/run installs it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxverify.report import (
    Application,
    PluginResult,
    SideFailure,
    SideResult,
    Survey,
    SurveyClass,
    survey_html,
)

OLD = Application("svfix-survey-app", "1.0.0", "svfix-survey-app==1.0.0", "index")
NEW = Application("svfix-survey-app", "2.0.0", "svfix-survey-app==2.0.0", "index")
PASSED = SideResult("passed", "1.0.0")
FAILED = SideResult("failed", "2.0.0", (SideFailure("plugin_load_failed", "refused <b>x</b>"),))


def result(name: str, survey_class: SurveyClass) -> PluginResult:
    sides = {
        "ok": (PASSED, PASSED),
        "regressed": (PASSED, FAILED),
        "fixed": (FAILED, PASSED),
        "broken": (FAILED, FAILED),
        "error": (SideResult("error", error="download failed"), PASSED),
    }[survey_class]
    return PluginResult(
        name,
        name,
        "1.0",
        None,
        survey_class,
        f"{survey_class} because",
        *sides,
    )


SURVEY = Survey(
    OLD,
    NEW,
    "3.11.7",
    (
        result("alpha-ok", "ok"),
        result("beta-ok", "ok"),
        result("zeta-regressed", "regressed"),
        result("gamma-fixed", "fixed"),
        result("delta-broken", "broken"),
        result("eta-error", "error"),
        result("<script>alert(1)</script>", "ok"),
    ),
)


def test_the_page_loads_nothing_from_anywhere() -> None:
    page = survey_html(SURVEY)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "default-src 'none'" in page
    assert "<script>alert(1)</script>" not in page  # a name is text, never markup


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail(
            "chromium and chromedriver are needed: apt-get install chromium chromium-driver"
        )
    from selenium import webdriver  # noqa: PLC0415 - only these tests drive a browser
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()


@pytest.fixture
def page(browser: object, tmp_path: Path) -> object:
    path = tmp_path / "survey.html"
    path.write_text(survey_html(SURVEY), encoding="utf-8")
    browser.get(path.as_uri())  # type: ignore[attr-defined]
    return browser


def visible_classes(page: object) -> list[str]:
    rows = page.find_elements("css selector", "#plugins tbody tr")  # type: ignore[attr-defined]
    return [row.get_attribute("data-class") for row in rows if row.is_displayed()]


def visible_names(page: object) -> list[str]:
    rows = page.find_elements("css selector", "#plugins tbody tr")  # type: ignore[attr-defined]
    return [row.find_elements("css selector", "td")[1].text for row in rows if row.is_displayed()]


def test_the_bar_shows_each_count(page: object) -> None:
    segments = page.find_elements("css selector", "#counts .segment")  # type: ignore[attr-defined]
    shown = {s.get_attribute("data-class"): s.get_attribute("data-count") for s in segments}
    assert shown == {"regressed": "1", "error": "1", "fixed": "1", "broken": "1", "ok": "3"}
    assert all(s.size["width"] > 0 for s in segments)
    # no script error, and the script ran
    assert page.find_element("id", "shown").text == "7 of 7 shown"  # type: ignore[attr-defined]


def test_regressions_come_first_and_a_class_filters(page: object) -> None:
    assert visible_classes(page)[0] == "regressed"
    page.find_element("css selector", 'button[data-filter="ok"]').click()  # type: ignore[attr-defined]
    assert set(visible_classes(page)) == {"ok"}
    assert len(visible_classes(page)) == 3
    page.find_element("css selector", 'button[data-filter="fixed"]').click()  # type: ignore[attr-defined]
    assert sorted(visible_classes(page)) == ["fixed", "ok", "ok", "ok"]
    page.find_element("id", "search").send_keys("alpha")  # type: ignore[attr-defined]
    assert visible_names(page) == ["alpha-ok"]


def test_a_column_sorts_both_ways(page: object) -> None:
    header = page.find_elements("css selector", "#plugins thead th")[1]  # type: ignore[attr-defined]
    header.click()
    names = visible_names(page)
    assert names == sorted(names) and len(names) == 7
    header.click()
    assert visible_names(page) == sorted(names, reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
