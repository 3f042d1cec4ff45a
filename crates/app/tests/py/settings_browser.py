"""The settings web app in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Run by `crates/app/tests/api/pages_browser.rs`, which starts the server, seeds a demo workspace and
a webhook receiver, and passes them in the environment:
  WMS_BASE_URL, WMS_EMAIL, WMS_PASSWORD, WMS_HOOK_URL, WMS_SCREENSHOTS (directory).

Every request the pages make is intercepted: anything not addressed to the test server is
aborted and fails the run, so "no page loads anything from outside the server" is checked, not
assumed. Any failed assertion exits non-zero with the step named.
"""

import csv
import io
import json
import os
import re
import sys
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

BASE = os.environ["WMS_BASE_URL"].rstrip("/")
EMAIL = os.environ["WMS_EMAIL"]
PASSWORD = os.environ["WMS_PASSWORD"]
HOOK_URL = os.environ["WMS_HOOK_URL"]
SHOTS = os.environ["WMS_SCREENSHOTS"]
SMTP_PORT = int(os.environ["WMS_SMTP_PORT"])

# The real SMTP server wms sends to (aiosmtpd): the links are read from the e-mails it receives.
import threading
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller

MAILS = []
MAILS_LOCK = threading.Lock()


class MailSink:
    async def handle_DATA(self, server, session, envelope):
        msg = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        with MAILS_LOCK:
            MAILS.append((envelope.rcpt_tos, msg.get_body(preferencelist=("plain",)).get_content()))
        return "250 OK"


def link_in_mail(to, kind, after=0, timeout=30):
    """The link to /{kind}/… in the (after+1)-th e-mail received for `to`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with MAILS_LOCK:
            mine = [text for rcpt, text in MAILS if to in rcpt]
        if len(mine) > after:
            m = re.search(re.escape(BASE) + "/" + kind + r"/wmsu_[0-9A-Za-z]+", mine[after])
            assert m, mine[after]
            return m.group(0)
        time.sleep(0.1)
    raise AssertionError(f"no e-mail to {to}")
SERVER = urlsplit(BASE).netloc
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

foreign = []
# Console errors a step causes on purpose (the browser logs every 4xx page it loads).
expected_errors = []
step_name = "start"


def step(name):
    global step_name
    step_name = name
    print(json.dumps({"step": name}), flush=True)


def shot(page, name, full_page=True):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=full_page)


def api_status(path, key):
    req = urllib.request.Request(BASE + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def api_post(path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def guard(route):
    host = urlsplit(route.request.url).netloc
    if host != SERVER and not route.request.url.startswith(("data:", "blob:")):
        foreign.append(route.request.url)
        route.abort()
    else:
        route.continue_()


def run(page):
    step("sign in")
    page.goto(BASE + "/login")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    shot(page, "login")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(BASE + "/settings/workspace/api-keys")
    expect(page.get_by_role("heading", name="API Keys")).to_be_visible()

    step("create a key and read it once")
    page.get_by_label("Name").fill("browser-test")
    page.get_by_role("button", name="Create key").click()
    new_key = page.locator("#new-key")
    expect(new_key).to_be_visible()
    key = new_key.input_value()
    assert re.fullmatch(r"wmsk_[0-9A-Za-z]{40,}", key), key
    expect(page.get_by_role("alert").filter(has_text="cannot show it again")).to_be_visible()
    copy = page.get_by_role("button", name="Copy key")
    expect(copy).to_be_visible()
    copy.click()
    page.wait_for_function("() => document.querySelector('[data-copy=new-key]').hasAttribute('aria-live')")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == key, "the copy button did not put the key on the clipboard"
    shot(page, "api-keys-created")

    step("see it masked after reload")
    page.goto(BASE + "/settings/workspace/api-keys")
    assert key not in page.content(), "the full key is shown again"
    row = page.locator("tr", has_text="browser-test")
    expect(row.locator("td.masked")).to_have_text("wmsk_…" + key[-4:])
    expect(row.locator(".badge")).to_have_text("active")
    shot(page, "api-keys")

    step("use it against /v1/channels")
    status, body = api_status("/v1/channels", key)
    assert status == 200, (status, body)
    page.goto(BASE + "/settings/workspace/api-keys")
    row = page.locator("tr", has_text="browser-test")
    expect(row.locator("td").nth(5)).not_to_have_text("never")

    step("revoke it behind a confirmation that names it")
    row.get_by_role("button", name="Revoke").click()
    dialog = page.locator("dialog[open]")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading")).to_contain_text("browser-test")
    shot(page, "api-keys-revoke-dialog", full_page=False)
    dialog.get_by_role("button", name="Revoke key").click()
    expect(page.locator(".flash")).to_contain_text("revoked")
    expect(page.locator("tr", has_text="browser-test").locator(".badge")).to_have_text("revoked")
    status, body = api_status("/v1/channels", key)
    assert status == 401 and body["code"] == "token_revoked", (status, body)

    step("delete it")
    page.locator("tr", has_text="browser-test").get_by_role("button", name="Delete").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.get_by_role("heading")).to_contain_text("browser-test")
    dialog.get_by_role("button", name="Delete key").click()
    expect(page.locator(".flash")).to_contain_text("deleted")
    expect(page.locator("tr", has_text="browser-test")).to_have_count(0)

    step("create a webhook")
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    page.get_by_label("Endpoint URL").fill(HOOK_URL)
    page.get_by_label("Platform").fill("custom")
    page.get_by_label("message.created").check()
    page.get_by_label("message.status_updated").check()
    page.get_by_role("button", name="Add destination").click()
    expect(page.locator(".flash")).to_contain_text("Destination added")
    detail_url = page.url

    step("reveal the secret")
    page.get_by_role("button", name="Reveal secret").click()
    secret = page.locator("#signing-secret").input_value()
    assert secret.startswith("whsec_"), secret

    step("send a test event and see the delivery in the log")
    page.get_by_role("button", name="Send test event").click()
    expect(page.locator(".flash")).to_contain_text("Test event delivered")
    delivery = page.locator("#deliveries tbody tr", has_text="webhook.test")
    expect(delivery).to_have_count(1)
    expect(delivery.locator(".badge")).to_have_text("succeeded")
    shot(page, "webhooks-detail")

    step("retry the delivery")
    delivery.get_by_role("button", name=re.compile("^Retry")).click()
    expect(page.locator(".flash")).to_contain_text("sent again")
    expect(page.locator("#deliveries tbody tr", has_text="webhook.test").locator("td.num")).to_have_text("2")

    step("deactivate and list")
    page.goto(detail_url)
    page.get_by_role("button", name="Deactivate").click()
    expect(page.locator(".flash")).to_contain_text("deactivated")
    page.get_by_role("link", name="← All destinations").click()
    expect(page.locator("tr", has_text=HOOK_URL).locator(".badge")).to_have_text("inactive")
    shot(page, "webhooks")

    step("open the REST reference")
    page.get_by_role("link", name="REST API").click()
    expect(page.get_by_role("heading", name="REST API reference")).to_be_visible()
    base_url = page.locator("#base-url").inner_text()
    assert base_url == BASE + "/v1", base_url
    page.locator("details.endpoint", has_text="/v1/channels").first.locator("summary").click()
    expect(page.locator("details.endpoint[open] pre").first).to_contain_text("curl -X")
    page.evaluate("() => window.scrollTo(0, 0)")
    shot(page, "rest-api", full_page=False)

    step("open the analytics chart")
    page.get_by_role("link", name="Analytics").click()
    # The range picker reloads the page: pick it only once the analytics page itself has loaded,
    # and give a busy machine time for the reload.
    page.wait_for_url(re.compile(r".*/analytics.*"))
    page.get_by_label("Range").select_option("30d")
    page.wait_for_url(re.compile(r".*range=30d.*"), timeout=45000)
    expect(page.locator("svg#analytics-chart")).to_be_visible()
    assert page.locator("svg#analytics-chart rect").count() > 0, "no bars drawn"
    expect(page.locator("#totals")).to_contain_text("Delivery rate")
    shot(page, "analytics")

    step("download the CSV")
    with page.expect_download() as dl:
        page.locator("#export-daily").click()
    rows = list(csv.reader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
    assert rows[0] == ["date", "sent", "delivered", "read", "failed", "delivery_rate", "read_rate"], rows[0]
    assert len(rows) == 31, len(rows)
    assert sum(int(r[1]) for r in rows[1:]) > 0, "no messages in the seeded month"
    with page.expect_download() as dl:
        page.locator("#export-countries").click()
    rows = list(csv.reader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
    assert rows[0][:2] == ["country", "contacts"] and len(rows) > 1, rows[:2]

    step("a Messenger channel's analytics point to the page about Meta's insights")
    messenger = page.locator('optgroup[label="Messenger and Instagram"] option').first.get_attribute("value")
    page.locator("select#channel").select_option(messenger)
    page.wait_for_url(re.compile(rf".*channel={messenger}.*"))
    page.locator("#platform-insights").click()
    page.wait_for_url(re.compile(r".*/docs/analytics-messenger-instagram$"))
    expect(page.get_by_role("heading", name="Where Meta shows Messenger insights")).to_be_visible()

    step("the audit log shows what was done, filtered by action")
    page.goto(BASE + "/settings/workspace/audit-log")
    expect(page.get_by_role("heading", name="Audit log", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Audit log")).to_have_attribute("aria-current", "page")
    for action in ["user.signed_in", "api_key.created", "api_key.revoked", "api_key.deleted", "webhook.created",
                   "webhook.secret_viewed", "webhook.updated"]:
        expect(page.locator("tbody td code", has_text=action).first).to_be_visible()
    assert key not in page.content() and secret not in page.content(), "a secret in the audit log"
    page.get_by_label("Action").select_option("api_key.created")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r".*action=api_key\.created.*"))
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator("tbody tr")).to_contain_text("browser-test")
    shot(page, "audit-log")

    step("sign out")
    page.goto(BASE + "/analytics")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r".*/login$"))
    page.goto(BASE + "/analytics")
    page.wait_for_url(re.compile(r".*/login\?next=.*"))

    step("the documentation, signed out: search and follow a hit to its section")
    page.goto(BASE + "/docs")
    expect(page.get_by_role("heading", name="Documentation", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Verify webhook signatures", exact=True)).to_be_visible()
    page.get_by_label("Search the documentation").fill("flask receiver raw body signature")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r".*/docs\?q=flask.*"))
    first = page.locator("a.hit").first
    expect(first).to_be_visible()
    href = first.get_attribute("href")
    assert re.fullmatch(r"/docs/[a-z0-9-]+#[a-z0-9-]+", href), href
    print(json.dumps({"first_hit": href}), flush=True)
    first.click()
    page.wait_for_url(re.compile(".*" + re.escape(href) + "$"))
    anchor = href.split("#", 1)[1]
    section = page.locator(f"[id='{anchor}']")
    expect(section).to_be_in_viewport()
    expect(page.locator("article.doc h1")).to_be_visible()
    shot(page, "docs", full_page=False)

    step("invite a member through the API and accept in the browser")
    status, body = api_post("/v1/auth/login", {"email": EMAIL, "password": PASSWORD})
    assert status == 200, (status, body)
    status, body = api_post(
        "/v1/users", {"email": "invitee@example.com", "name": "Invitee", "role": "agent"}, body["token"]
    )
    assert status == 201, (status, body)
    assert "invitation" not in body and "wmsu_" not in json.dumps(body), body
    assert body["status"] == "invited", body
    link = link_in_mail("invitee@example.com", "invitations")
    # The invitee opens the e-mail in their own browser: nobody else is signed in there.
    page.context.clear_cookies()
    page.goto(link)
    expect(page.get_by_label("New password")).to_be_visible()
    shot(page, "invitation")
    page.get_by_label("New password").fill("invitee password 123")
    page.get_by_role("button", name="Set password and join").click()
    # An agent lands on the first settings page an agent may use, signed in as the invitee.
    page.wait_for_url(BASE + "/analytics")
    expect(page.locator(".signout .user")).to_have_text("invitee@example.com")
    expect(page.get_by_role("link", name="Members")).to_be_visible()
    expect(page.get_by_role("link", name="Audit log")).to_have_count(0)

    step("a used invitation link is refused with a clear page")
    expected_errors.append("status of 410 (Gone)")
    res = page.goto(link)
    assert res.status == 410, res.status
    expect(page.get_by_role("heading", name="This invitation link does not work")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("used already")

    step("a forgotten password is reset through the e-mailed link")
    page.context.clear_cookies()
    page.goto(BASE + "/login")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("E-mail").fill("invitee@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your e-mail")).to_be_visible()
    reset = link_in_mail("invitee@example.com", "password-reset", after=1)
    page.goto(reset)
    page.get_by_label("New password").fill("a new invitee password")
    page.get_by_role("button", name="Set the new password").click()
    page.wait_for_url(re.compile(".*/login.*"))
    status, body = api_post("/v1/auth/login", {"email": "invitee@example.com", "password": "a new invitee password"})
    assert status == 200, (status, body)
    status, body = api_post("/v1/auth/login", {"email": "invitee@example.com", "password": "invitee password 123"})
    assert status == 401, (status, body)
    expected_errors.append("status of 410 (Gone)")
    res = page.goto(reset)
    assert res.status == 410, res.status
    expect(page.get_by_role("heading", name="This password reset link does not work")).to_be_visible()


def main():
    sink = Controller(MailSink(), hostname="127.0.0.1", port=SMTP_PORT)
    sink.start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=BASE)
        context.route("**/*", guard)
        page = context.new_page()
        page.set_default_timeout(15000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        try:
            run(page)
        except Exception as e:  # noqa: BLE001 - report the step, then fail
            shot(page, "failure")
            print(json.dumps({"failed": step_name, "error": repr(e)[:2000]}), flush=True)
            browser.close()
            sys.exit(1)
        browser.close()
    assert not foreign, f"pages loaded from other hosts: {foreign}"
    for expected in expected_errors:
        match = next((e for e in errors if expected in e), None)
        assert match, f"expected a console error with {expected!r}: {errors}"
        errors.remove(match)
    assert not errors, f"script or console errors: {errors}"
    print(json.dumps({"ok": True}), flush=True)


if __name__ == "__main__":
    main()
