"""libtpu's runtime metrics service: its messages (generated), a thin client (``client``) and the key rules (``keys``).

Importing this package needs neither grpcio nor the generated module; only
``client`` needs grpcio.
"""

# How one metric's request ended (``client.Answer.outcome``).
OK = "ok"
DOWN = "down"  # nothing listens: no workload holds the TPU
HUNG = "hung"  # the deadline passed without an answer
REFUSED = "refused"  # the service answered with an error: it does not serve this metric
