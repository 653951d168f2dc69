"""The remote layer: SSH transport, the batch protocol, the Nornir runner and the RouterOS API."""
