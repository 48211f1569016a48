"""The local stack: ReplyOnce on one machine without AWS or Docker.

It builds the embedded AWS (moto server) from ``template.yaml`` so local runs,
tests and the deployed stack cannot drift apart.
"""
