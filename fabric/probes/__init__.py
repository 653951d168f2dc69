"""Active probes: the ping matrix and the bandwidth tests. They plan from the intent, run as
Nornir tasks over each Spark's SSH session, and produce facts (PingFact, BandwidthFact) that
the validators judge. Planning and output splitting are pure and unit-tested."""
