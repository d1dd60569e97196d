#!/usr/bin/env python3
"""Opens tessera's built documentation in headless Chromium and checks what a reader sees.

Usage: check_site.py HTML_DIR [--screenshot FILE.png]

Not only that the HTML files exist: each page is loaded by the browser (Debian's chromium and
chromium-driver, driven by Selenium), its rendered text and elements are checked, and every image
of the performance page must have loaded (decoded, with a width). Exits 1 naming every failed
check; writes a screenshot of the index page where --screenshot says.
"""
import argparse
import pathlib
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--allow-file-access-from-files"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=pathlib.Path)
    parser.add_argument("--screenshot", type=pathlib.Path)
    args = parser.parse_args()
    root = args.html.resolve()
    failures = []

    def check(ok, what):
        print(("ok:     " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    driver = browser()
    try:
        def load(page):
            path = root / page
            check(path.is_file(), f"{page} exists")
            driver.get(path.as_uri())
            return driver.find_element(By.TAG_NAME, "body").text

        # The index: the title, the front text, the example's output, the table of contents.
        text = load("index.html")
        check("tessera" in driver.title, f"index: the title names tessera ({driver.title!r})")
        check("numpy.tile and its family at the memory's speed" in text, "index: the front sentence")
        check("tessera.tile_backward(np.ones((4, 6), np.float32), (2, 2), (2, 3))" in text,
              "index: the example is shown")
        toc = {a.text for a in driver.find_elements(By.CSS_SELECTOR, "div.toctree-wrapper a")}
        for title in ("Install", "Quick start", "Python reference", "C reference", "C++ reference",
                      "Performance", "Changelog"):
            check(title in toc, f"index: the contents link to {title!r}")
        if args.screenshot:
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            check(driver.save_screenshot(str(args.screenshot)), f"index: screenshot {args.screenshot}")

        # The Python reference: tessera.tile's entry, its signature and its numpydoc sections.
        load("api/python.html")
        entries = driver.find_elements(By.ID, "tessera.tile")
        check(len(entries) == 1, "api/python: one entry with the anchor tessera.tile")
        if entries:
            signature = entries[0].text
            check(signature.startswith("tessera.tile(A, reps, *, out=None"),
                  f"api/python: tessera.tile's signature ({signature!r})")
            body = entries[0].find_element(By.XPATH, "following-sibling::dd[1]").text
            for needle in ("Construct an array by repeating A", "Parameters", "Returns", "Raises",
                           "ValueError", "Examples", "tessera.tile(a, (2, 2))"):
                check(needle in body, f"api/python: tessera.tile's entry shows {needle!r}")
            # numpydoc's parameter list: each name (strong) with its type (the classifier).
            params = {}
            for dt in entries[0].find_elements(By.XPATH, "following-sibling::dd[1]//dl/dt"):
                names = dt.find_elements(By.TAG_NAME, "strong")
                types = dt.find_elements(By.CSS_SELECTOR, "span.classifier")
                if names and types:
                    params[names[0].text] = types[0].text
            for name, kind in (("A", "array_like or torch.Tensor"), ("reps", "int, sequence of ints"),
                               ("out", "ndarray or torch.Tensor, optional"), ("max_threads", "int, optional"),
                               ("negative_reps", "clamp_to_zero")):
                check(kind in params.get(name, ""),
                      f"api/python: tessera.tile's parameter {name} : {kind} ({params.get(name)!r})")
        for name in ("tessera.repeat", "tessera.repeat_backward", "tessera.Plan", "tessera.Plan.execute_region",
                     "tessera.torch.repeat_interleave", "tessera.dask.tile"):
            check(len(driver.find_elements(By.ID, name)) == 1, f"api/python: an entry for {name}")

        # The C and C++ references: entries rendered from the headers' comments.
        text = load("api/c.html")
        for needle in ("tessera_status tessera_tile(", "tessera_plan_create", "tessera_last_error",
                       "tessera_tile_dlpack", "TESSERA_MAX_NDIM"):
            check(needle in text, f"api/c: shows {needle!r}")
        text = load("api/cpp.html")
        for needle in ("class Plan", "class Dims", "struct Options", "InvalidArgument"):
            check(needle in text, f"api/cpp: shows {needle!r}")

        # The performance page: its tables and every image loaded by the browser.
        text = load("performance.html")
        check("%stream" in text and "%read" in text, "performance: the tables with their limits")
        images = driver.find_elements(By.CSS_SELECTOR, "div.body img")
        check(len(images) >= 2, f"performance: at least 2 images ({len(images)})")
        for img in images:
            loaded = driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth;", img)
            check(bool(loaded), f"performance: image {img.get_attribute('src')} loaded ({loaded} px wide)")
    finally:
        driver.quit()
    print(f"check_site: {len(failures)} failed" if failures else "check_site: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
