"""TEST DOUBLE of `python3 -m sglang.launch_server`: records argv and env, then serves."""

import argparse
import sys

from fabric_double import record, serve

record("sglang", sys.argv[1:])
ap = argparse.ArgumentParser(description="TEST DOUBLE of sglang.launch_server")
ap.add_argument("--model-path", required=True)
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=30000)
args, _ = ap.parse_known_args()
serve("sglang", args.model_path, args.host, args.port)
