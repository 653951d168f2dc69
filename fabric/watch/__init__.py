"""`fabric watch`: keep watching the fabric after the gate, in Prometheus.

labels.py (the intent's names for every twin and lane), collect.py (one persistent session
per host, read every interval), metrics.py (readings -> samples), serve.py (the loop, the
HTTP exposition and the textfile writer); alerts.yml is the shipped rule file.
"""
