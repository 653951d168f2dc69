"""Nornir connection plugins (registered by entry point): `routeros_api` for the CRS804."""
