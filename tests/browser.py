"""Headless Chromium (Debian's, at /usr/bin/chromium) driven by Playwright, allowed to reach only the server under
test: any request to another host is refused and remembered, so a test can assert the pages need no other host."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Page, Route

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
DOCS = Path(__file__).resolve().parent.parent / "docs"


@dataclass
class Visit:
    page: Page
    origin: str
    elsewhere: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    async def open(self, path: str, token: str | None = None) -> Page:
        await self.page.goto(self.origin + path + (f"#token={token}" if token else ""))
        return self.page

    async def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(exist_ok=True)
        await self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    async def docs_screenshot(self, name: str) -> None:
        """The window as it is, as docs/{name}.png, when AGENTLOG_DOCS_SCREENSHOT=1 (the README's picture)."""
        if os.environ.get("AGENTLOG_DOCS_SCREENSHOT") == "1":
            await self.page.screenshot(path=str(DOCS / f"{name}.png"))


@asynccontextmanager
async def visit(browser: Browser, origin: str) -> AsyncIterator[Visit]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB", timezone_id="Europe/Berlin")
    page = await context.new_page()
    seen = Visit(page, origin)

    async def only_the_server(route: Route) -> None:
        if route.request.url.startswith(origin + "/") or route.request.url.startswith("data:"):
            await route.continue_()
        else:
            seen.elsewhere.append(route.request.url)
            await route.abort()

    await context.route("**/*", only_the_server)
    page.on("console", lambda m: m.type == "error" and seen.problems.append(m.text))
    page.on("pageerror", lambda e: seen.problems.append(str(e)))
    try:
        yield seen
    finally:
        await context.close()


CONTRAST = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || c[3] > 0) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const failing = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && style.fontWeight >= 700);
    if (ratio < (large ? 3 : 4.5)) failing.push(`${el.tagName} "${el.textContent.trim().slice(0, 40)}" ${ratio.toFixed(2)}`);
  }
  return failing;
}"""


async def low_contrast(page: Page) -> list[str]:
    """Text on the page below WCAG AA contrast (4.5:1, or 3:1 for large text), with its ratio."""
    return await page.evaluate(CONTRAST)
