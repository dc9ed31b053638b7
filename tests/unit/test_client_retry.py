"""A keyed submit whose answer times out after the request went out is asked again with the same key
(issue 24, item 2; found by review): the master may have stored it, so "did not answer" must not
end the submit with the key unknown to the user. The master here is a plain HTTP server on loopback
that stalls on its first answer, the one fault a real master cannot be made to show on demand."""
from __future__ import annotations

import http.server
import json
import threading

from statgrid.config import load_config
from statgrid.grid.interface.client import GridClient, Remote


class _Stalling(http.server.BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []
    release = threading.Event()

    def do_POST(self):                                     # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.path, self.headers.get("Idempotency-Key")))
        if len(self.seen) == 1:                            # stored, but the answer never comes in time
            self.release.wait(30)
            return
        body = json.dumps({"id": 7, "state": "PEND"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_submit_whose_answer_timed_out_is_sent_again_with_its_key(tmp_path):
    (tmp_path / "grid.toml").write_text("")
    cfg = load_config(tmp_path / "grid.toml", {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = GridClient(cfg, timeout_s=1.0, submit_retry_s=60.0,
                            remote=Remote(url=f"http://127.0.0.1:{server.server_address[1]}", token="sg_x"))
        rec = client.submit(["true"], key="k-123", cwd=str(tmp_path), env={})
        assert rec["id"] == 7
        assert [p for p, _ in _Stalling.seen] == ["/jobs", "/jobs"]
        assert {k for _, k in _Stalling.seen} == {"k-123"}             # the same key both times
    finally:
        _Stalling.release.set()
        server.shutdown()
        server.server_close()
