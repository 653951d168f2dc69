"""Facts collection: the Spark command table, the Nornir tasks that gather, the switch reads."""
