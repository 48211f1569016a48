"""Prove it: a Jepsen-style harness for the six invariants of docs/design.md.

Generate a seeded workload, deliver it through the local stack while
injecting faults on every side (Nylas deliveries, AWS, the Nylas API, the
replier's processes), record the history of what was delivered, processed
and sent, and check the invariants against it (``devstack.invariants``).
"""
