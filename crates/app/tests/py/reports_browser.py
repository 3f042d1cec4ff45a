"""The reports, SLA policies and business hours pages in headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright).

Run by `crates/app/tests/api/pages/reports.rs`, which starts the server, builds conversations with
known times and passes them in the environment: WMS_BASE_URL, WMS_EMAIL, WMS_PASSWORD,
WMS_SCREENSHOTS, WMS_EXPECTED (JSON: `conversations`, `buckets`, `human` and `ai` counts per
bucket, `admin_id`, `agent_csv`: the REST CSV grouped by member).

Every request the pages make is intercepted: anything not addressed to the test server is aborted
and fails the run. Any failed assertion exits non-zero with the step named.
"""

import csv
import io
import json
import os
import re
import sys
from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

BASE = os.environ["WMS_BASE_URL"].rstrip("/")
EMAIL = os.environ["WMS_EMAIL"]
PASSWORD = os.environ["WMS_PASSWORD"]
SHOTS = os.environ["WMS_SCREENSHOTS"]
EXPECTED = json.loads(os.environ["WMS_EXPECTED"])
SERVER = urlsplit(BASE).netloc
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

foreign = []
step_name = "start"


def step(name):
    global step_name
    step_name = name
    print(json.dumps({"step": name}), flush=True)


def shot(page, name):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def guard(route):
    host = urlsplit(route.request.url).netloc
    if host != SERVER and not route.request.url.startswith(("data:", "blob:")):
        foreign.append(route.request.url)
        route.abort()
    else:
        route.continue_()


def buckets(page):
    rows = page.locator("#distribution tbody tr")
    expect(rows).to_have_count(len(EXPECTED["buckets"]))
    out = []
    for i in range(rows.count()):
        row = rows.nth(i)
        out.append((row.get_attribute("data-bucket"), int(row.locator("td.human").text_content()),
                    int(row.locator("td.ai").text_content())))
    return out


def run(page):
    step("sign in and open the reports from the navigation")
    page.goto(BASE + "/login")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/settings/.*"))
    page.get_by_role("link", name="Reports", exact=True).click()
    page.wait_for_url(BASE + "/settings/workspace/reports")
    expect(page.get_by_role("heading", name="Conversation reports")).to_be_visible()

    step("the summary and the distribution show the known conversations")
    expect(page.locator('#summary [data-figure="conversations"] .value')).to_have_text(str(EXPECTED["conversations"]))
    expect(page.locator('#durations tr[data-figure="first_response"] td').nth(1)).to_have_text(str(sum(EXPECTED["human"])))
    want = list(zip(EXPECTED["buckets"], EXPECTED["human"], EXPECTED["ai"]))
    got = buckets(page)
    assert got == [tuple(w) for w in want], (got, want)
    chart = page.locator("svg#distribution-chart")
    expect(chart).to_be_visible()
    drawn = chart.locator("rect").count()
    assert drawn == sum(1 for _, h, a in want if h > 0) + sum(1 for _, h, a in want if a > 0), drawn
    shot(page, "reports")

    step("group by member")
    page.get_by_label("Group by").select_option("agent")
    page.wait_for_url(re.compile(r".*group_by=agent.*"), timeout=45000)
    expect(page.locator(f'#groups tr[data-key="user:{EXPECTED["admin_id"]}"]')).to_have_count(1)
    expect(page.locator("svg#groups-chart")).to_be_visible()

    step("download the CSV of the selection")
    with page.expect_download() as dl:
        page.locator("#export-csv").click()
    text = open(dl.value.path(), encoding="utf-8", newline="").read()
    assert text == EXPECTED["agent_csv"], (text, EXPECTED["agent_csv"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "key_type" and any(r[:2] == ["user", str(EXPECTED["admin_id"])] for r in rows[1:]), rows

    step("a bad period is named beside its field")
    page.goto(BASE + "/settings/workspace/reports?since=2026-11-03&until=2026-11-02")
    expect(page.locator("#since-error")).to_be_visible()

    step("an SLA policy with a bad value is refused beside the field")
    page.get_by_role("link", name="SLA policies", exact=True).click()
    page.wait_for_url(BASE + "/settings/workspace/sla-policies")
    new = page.locator("#new-policy")
    new.get_by_label("Name", exact=True).fill("Gold")
    new.get_by_label("First response").fill("soon")
    new.get_by_role("button", name="Create policy").click()
    expect(page.locator("#new-first_response_seconds-error")).to_be_visible()

    step("create a policy")
    new = page.locator("#new-policy")
    new.get_by_label("First response").fill("15m")
    new.get_by_label("Labels").fill("vip")
    new.locator('input[name="channel_ids"]').first.check()
    new.get_by_role("button", name="Create policy").click()
    expect(page.locator(".flash")).to_contain_text("Gold was created")
    card = page.locator("section.card[data-policy-id]", has_text="Gold")
    expect(card.locator(".policy-now")).to_contain_text("first response 15m")

    step("edit it")
    card.locator("summary", has_text="Edit").click()
    card.get_by_label("Resolution").fill("2d")
    card.get_by_role("button", name="Save policy").click()
    expect(page.locator(".flash")).to_contain_text("Gold was saved")
    expect(page.locator("section.card[data-policy-id]", has_text="Gold").locator(".policy-now")).to_contain_text("resolution 2d")

    step("create another and delete it behind a confirmation")
    new = page.locator("#new-policy")
    new.get_by_label("Name", exact=True).fill("Temp")
    new.get_by_label("Next response").fill("1h")
    new.get_by_role("button", name="Create policy").click()
    expect(page.locator(".flash")).to_contain_text("Temp was created")
    temp = page.locator("section.card[data-policy-id]", has_text="Temp")
    temp.get_by_role("button", name="Delete policy").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.get_by_role("heading")).to_contain_text("Temp")
    dialog.get_by_role("button", name="Delete policy").click()
    expect(page.locator(".flash")).to_contain_text("deleted")
    expect(page.locator("section.card[data-policy-id]")).to_have_count(1)
    shot(page, "sla-policies")

    step("business hours: a bad time zone is named, then the hours are saved")
    page.get_by_role("link", name="Business hours", exact=True).click()
    page.wait_for_url(BASE + "/settings/workspace/business-hours")
    page.get_by_label("Time zone").fill("Mars/Olympus")
    page.get_by_role("button", name="Save business hours").click()
    expect(page.locator("#timezone-error")).to_be_visible()
    page.get_by_label("Time zone").fill("Europe/Berlin")
    page.get_by_label("Monday").fill("09:00-17:00")
    page.get_by_role("button", name="Save business hours").click()
    expect(page.locator(".flash")).to_contain_text("Business hours saved")
    expect(page.get_by_label("Monday")).to_have_value("09:00-17:00")
    shot(page, "business-hours")


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
        context.route("**/*", guard)
        page = context.new_page()
        page.set_default_timeout(15000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "422" not in m.text else None)
        try:
            run(page)
        except Exception as e:  # noqa: BLE001 - report the step, then fail
            shot(page, "reports-failure")
            print(json.dumps({"failed": step_name, "error": repr(e)[:2000]}), flush=True)
            browser.close()
            sys.exit(1)
        browser.close()
    assert not foreign, f"pages loaded from other hosts: {foreign}"
    assert not errors, f"script or console errors: {errors}"
    print(json.dumps({"ok": True}), flush=True)


if __name__ == "__main__":
    main()
