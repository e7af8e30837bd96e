"""Serves a GGUF chat model over an OpenAI-compatible HTTP API on loopback,
with llama.cpp's own server (the PyPI package xllamacpp), for the tests in
real_model.rs: `python serve_model.py MODEL.gguf` prints `listening URL`
once it answers, then serves until it is killed."""

import sys
import time

import xllamacpp

params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = 4096
params.n_parallel = 1
params.port = 0
params.hostnames = ["127.0.0.1"]
params.cpuparams.n_threads = 2
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
while True:
    time.sleep(3600)
