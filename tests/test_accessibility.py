"""Basic accessibility of every page of the demo build: landmarks, headings, labels,
text alternatives, status told in words, and WCAG contrast of the colours of both themes
(computed from the stylesheet; test_browser.py checks them again as Chromium draws them)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import lxml.html
import pytest

from statusgen.render.words import ENGLISH
from tests.test_pages import DemoBuild, demo_build, text_of

status_word = ENGLISH.status_word


STATIC = Path(__file__).resolve().parents[1] / "templates" / "static"

#: Colours the stylesheet declares per theme, and what each must stand out from.
TEXT_ON_BACKGROUNDS = [
    "--fg",
    "--muted",
    "--link",
    "--st-operational",
    "--st-degraded",
    "--st-partial_outage",
    "--st-major_outage",
    "--st-maintenance",
    "--st-unknown",
]
MARKS = [
    "--av-full",
    "--av-high",
    "--av-mid",
    "--av-low",
    "--av-none",
    "--av-maint",
    "--av-new",
    "--lat-p50",
    "--lat-p95",
    "--focus",
]
BACKGROUNDS = ["--bg", "--surface"]


@pytest.fixture(scope="module")
def demo() -> DemoBuild:
    return demo_build()


# -- contrast ------------------------------------------------------------------------------


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""
    hex_ = colour.strip().lstrip("#")
    if len(hex_) == 3:
        hex_ = "".join(c * 2 for c in hex_)
    r, g, b = (_channel(int(hex_[i : i + 2], 16)) for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """The WCAG 2 contrast ratio of two colours (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_is_computed_as_wcag_says() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#fff", "#fff") == pytest.approx(1.0)


def theme_colours(css: str) -> dict[str, dict[str, str]]:
    """The custom properties of ``:root``, light (the first block) and dark (the media query)."""
    light = re.search(r":root\s*\{(.*?)\}", css, re.DOTALL)
    dark = re.search(r"@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{(.*?)\}", css, re.DOTALL)
    assert light and dark, "the stylesheet declares both themes"

    def props(block: str) -> dict[str, str]:
        return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{3,6})\s*;", block))

    return {"light": props(light.group(1)), "dark": props(dark.group(1))}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_colours_have_enough_contrast(theme: str) -> None:
    colours = theme_colours((STATIC / "site.css").read_text(encoding="utf-8"))[theme]
    for name in TEXT_ON_BACKGROUNDS:
        for bg in BACKGROUNDS:
            ratio = contrast(colours[name], colours[bg])
            assert ratio >= 4.5, f"{theme}: text {name} on {bg} is {ratio:.2f}:1"
    for name in MARKS:
        ratio = contrast(colours[name], colours["--bg"])
        assert ratio >= 3, f"{theme}: mark {name} on --bg is {ratio:.2f}:1"
    assert contrast(colours["--tip-fg"], colours["--tip-bg"]) >= 4.5


def test_dark_theme_overrides_every_colour() -> None:
    themes = theme_colours((STATIC / "site.css").read_text(encoding="utf-8"))
    assert set(themes["light"]) == set(themes["dark"])


# -- structure -------------------------------------------------------------------------------


def _pages(demo: DemoBuild) -> list[tuple[str, lxml.html.HtmlElement]]:
    return [(p, demo.page(p)) for p in demo.pages()]


def test_landmarks_title_and_language(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        assert page.get("lang") == "en", path
        assert text_of(page.xpath("//head/title")[0]), path
        assert len(page.xpath("//main[@id='main']")) == 1, path
        if path.startswith("embed/"):  # one line in another site's frame: its heading, no site chrome
            assert len(page.xpath("//main/h1")) == 1 and not page.xpath("//body/header"), path
            continue
        assert len(page.xpath("//body/header")) == 1 and len(page.xpath("//body/footer")) == 1, path
        assert page.xpath("//header//nav[@aria-label]"), path
        assert page.xpath("//a[@href='#main']"), f"{path}: a skip link"
        assert len(page.xpath("//h1")) == 1, path
        current = page.xpath("//nav//a[@aria-current='page']")
        assert current or path.startswith(("services/", "incidents/", "_errors/")), path  # pages outside the nav


def test_heading_levels_do_not_skip(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        levels = [int(h.tag[1]) for h in page.iter("h1", "h2", "h3", "h4", "h5", "h6")]
        assert levels[0] == 1, path
        for before, after in itertools.pairwise(levels):
            assert after <= before + 1, f"{path}: h{before} then h{after}"


def test_sections_are_labelled_by_a_heading(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        for section in page.xpath("//section | //article"):
            target = section.get("aria-labelledby")
            assert target, f"{path}: a <{section.tag}> without a label"
            heading = page.get_element_by_id(target)
            assert heading.tag in ("h1", "h2", "h3", "h4") and text_of(heading), path


def test_images_have_text_alternatives(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        for img in page.xpath("//img"):
            assert img.get("alt") is not None, path
        for svg in page.xpath("//*[local-name()='svg']"):
            assert (svg.get("role") == "img" and svg.get("aria-label")) or svg.get("aria-hidden") == "true", path


def test_controls_have_labels_and_links_have_words(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        for control in page.xpath("//input | //select | //textarea"):
            labels = page.xpath(f"//label[@for='{control.get('id')}']")
            assert (labels and text_of(labels[0])) or control.get("aria-label"), f"{path}: {control.get('id')}"
        for link in page.xpath("//a"):
            assert text_of(link) or link.get("aria-label"), f"{path}: a link without words"
        for table in page.xpath("//table"):
            assert table.xpath(".//th"), f"{path}: a table without headers"


def test_status_is_never_told_by_colour_alone(demo: DemoBuild) -> None:
    for path, page in _pages(demo):
        for word in page.xpath("//span[starts-with(@class, 'st st-')][not(parent::p[@class='headline'])]"):
            status = word.get("class").removeprefix("st st-")
            assert text_of(word) == status_word(status), path
        for headline in page.xpath("//p[@class='headline']/span"):  # its words say it: "4 services affected"
            assert text_of(headline), path
        for bar in page.xpath("//div[@class='bar']"):  # the colours of a bar are told in words beside it
            (foot,) = bar.xpath("following-sibling::p[@class='bar-foot']")
            words = (
                r"(([\d.]+% available|No checks counted) over 90 days"
                r"|[\d.]+% available since \w+ \d+, \d+, when collecting began"
                r"|Collecting since \w+ \d+, \d+: no whole day counted yet), [\d,]+ min of incidents"
            )
            assert re.fullmatch(words, text_of(foot)), path
        for cell in page.xpath("//table[@id='days']//td[@class]"):
            assert re.fullmatch(r"[\d.]+%|no data|maintenance only", text_of(cell)), path
    front = demo.page("index.html")
    legend = front.xpath("//ul[@class='legend']/li")
    assert len(legend) == 8 and all(text_of(item) for item in legend)  # the bands, today so far, no data yet
    assert len(front.xpath("//div[@class='bar']")) == len(demo.config.services)


def test_focus_is_visible() -> None:
    css = (STATIC / "site.css").read_text(encoding="utf-8")
    assert re.search(r"a:focus-visible[^{]*\{\s*outline: 3px solid var\(--focus\)", css)
    assert re.search(r"\[tabindex\]:focus-visible[^{]*\{\s*outline: 3px solid var\(--focus\)", css), (
        "bars and charts get a tabindex from the script, and a visible focus from this rule"
    )
    assert re.search(r"\.mark \{[^}]*outline: 2px solid var\(--fg\)", css), "the bucket told is outlined"
