"""What ``leet serve`` exports: W&B system-metric keys as Prometheus metrics.

``names`` turns one W&B key into a Prometheus name, labels and unit factor
(pure); ``exposition`` turns the hub's latest ``Sample`` into the page a
scrape reads. No Textual here.
"""
