"""A real SMTP server for the tests (aiosmtpd): accepts every mail on 127.0.0.1:PORT and prints
each one as a JSON line on stdout (from, to, subject, text and HTML bodies), after a first line
`READY`. It runs until its standard input closes or it is killed.

Usage: python smtp_sink.py PORT
"""

import json
import sys
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller


class Sink:
    async def handle_DATA(self, server, session, envelope):
        msg = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        text = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",))
        print(
            json.dumps(
                {
                    "from": envelope.mail_from,
                    "to": envelope.rcpt_tos,
                    "header_from": str(msg["From"]),
                    "subject": str(msg["Subject"]),
                    "text": text.get_content() if text is not None else None,
                    "html": html.get_content() if html is not None else None,
                }
            ),
            flush=True,
        )
        return "250 OK"


def main():
    port = int(sys.argv[1])
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    print("READY", flush=True)
    try:
        sys.stdin.read()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
