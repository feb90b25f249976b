#!/usr/bin/env python3
"""A Home-Index module written for the Python module runtime's protocol (run_server.py; its
worker loop is described in docs/protocol.md), with nothing but redis-py (Debian's python3-redis) and the
documented keys: it is the end-to-end suite's proof that such a module works unchanged against
homeindexd.

Like cmd/example-module, check() is true unless version.json says 1, and run()
writes version.json and returns the document with note "hello" and content "hello world".
With RECORD_FILE set, every check and run is appended there as one JSON line, in the format of
the Go test modules (cmd/internal/jobrecord); a run's line carries the SHA-256 of the file run()
read. Paths are used the way upstream's runtime uses them: the `paths` key as json.loads gives
it (a name that is not UTF-8 holds PEP 383 surrogates), joined to FILES_DIRECTORY with pathlib.
"""

import hashlib
import json
import os
import pathlib
import signal
import sys
import time

import redis

NAME = os.environ.get("QUEUE_NAME") or os.environ["MODULE_NAME"]
UID = os.environ.get("MODULE_UID")
TIMEOUT = float(os.environ.get("TIMEOUT", "30"))
UID_RETRY_SECONDS = float(os.environ.get("UID_RETRY_SECONDS", "600"))
FILES = pathlib.Path(os.environ.get("FILES_DIRECTORY", "/files"))
BY_ID = pathlib.Path(os.environ.get("METADATA_DIRECTORY", "/home-index/metadata")) / "by-id"
RECORD_FILE = os.environ.get("RECORD_FILE")
WORKER_ID = os.environ.get("WORKER_ID", "pid%d" % os.getpid())

CHECK, RUN = NAME + ":check", NAME + ":run"
TIMEOUTS, DONE = "timeouts", "modules:done"


def connect():
    host = os.environ.get("REDIS_HOST", "redis")
    for prefix in ("redis://", "http://"):
        if host.startswith(prefix):
            host = host[len(prefix):]
    host, _, port = host.partition(":")
    return redis.Redis(host=host, port=int(port or 6379), decode_responses=True)


r = connect()


def log(level, message, **fields):
    print(json.dumps({"level": level, "module": NAME, "message": message, **fields}), flush=True)


def record(doc, phase, start, result, sha256=None):
    if not RECORD_FILE:
        return
    line = {"id": doc.get("id"), "path": next(iter(doc.get("paths", {})), ""), "module": NAME,
            "worker": WORKER_ID, "phase": phase, "attempt": doc.get("_hi_attempt", 0),
            "start": start, "end": time.time(), "result": result}
    if sha256:
        line["sha256"] = sha256
    with open(RECORD_FILE, "a") as f:
        f.write(json.dumps(line) + "\n")


# The module itself.

def check(file_path, document, metadata_dir):
    try:
        return json.loads((metadata_dir / "version.json").read_text()).get("version") != 1
    except (OSError, ValueError):
        return True


def run(file_path, document, metadata_dir):
    READ["sha256"] = hashlib.sha256(file_path.read_bytes()).hexdigest()
    metadata_dir.mkdir(parents=True, exist_ok=True)
    (metadata_dir / "version.json").write_text(json.dumps({"version": 1}))
    return {"document": dict(document, note="hello"), "content": "hello world"}


READ = {}  # what the last run() read, for the record


# The runtime: upstream's add_timeout / remove_timeout and the two phases.

def member(queue, item):
    return json.dumps({"q": queue, "d": item})


def add_timeout(queue, item):
    pipe = r.pipeline()  # MULTI/EXEC, as upstream
    pipe.zadd(TIMEOUTS, {member(queue, item): time.time() + TIMEOUT})
    pipe.rpush(queue + ":processing", item)
    pipe.execute()


def remove_timeout(queue, item):
    """True if this worker still owns the item (and releases it); False if it was reaped or
    its deadline passed (the reaper will retry it)."""
    m = member(queue, item)
    score = r.zscore(TIMEOUTS, m)
    if score is None or score < time.time():
        return False
    r.zrem(TIMEOUTS, m)
    r.lrem(queue + ":processing", 0, item)
    return True


def uid_ok(queue, item, doc):
    if "uid" in doc and UID is not None and str(doc["uid"]) != UID:
        log("WARNING", "uid mismatch", id=doc.get("id"))
        r.lpush(queue, item)
        time.sleep(UID_RETRY_SECONDS)
        return False
    return True


def paths_of(doc):
    rel = next(iter(doc["paths"]))
    return FILES / rel, BY_ID / doc["id"] / NAME


def process_check():
    item = r.lpop(CHECK)
    if item is None:
        return False
    doc = json.loads(item)
    if not uid_ok(CHECK, item, doc):
        return True
    add_timeout(CHECK, item)
    file_path, metadata_dir = paths_of(doc)
    start = time.time()
    wanted = check(file_path, doc, metadata_dir)
    record(doc, "check", start, "true" if wanted else "false")
    if not remove_timeout(CHECK, item):
        return True
    if wanted:
        r.rpush(RUN, item)
    else:
        r.rpush(DONE, json.dumps({"module": NAME, "document": doc}))
    return True


def process_run():
    popped = r.blpop(RUN, timeout=1)
    if popped is None:
        return False
    item = popped[1]
    doc = json.loads(item)
    if not uid_ok(RUN, item, doc):
        return True
    add_timeout(RUN, item)
    file_path, metadata_dir = paths_of(doc)
    start = time.time()
    READ.clear()
    result = run(file_path, doc, metadata_dir)
    record(doc, "run", start, "ok", READ.get("sha256"))
    if not remove_timeout(RUN, item):
        return True
    payload = result if isinstance(result, dict) and "document" in result else {"document": result}
    payload["module"] = NAME
    r.rpush(DONE, json.dumps(payload))
    return True


def main():
    log("INFO", "python module started", worker=WORKER_ID)
    while True:
        while process_check():
            pass
        while True:
            while process_check():
                pass
            if not process_run():
                break


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    main()
